// `captaindata-poller/svelte`: a readable store following Svelte's store contract (an object
// whose subscribe(run) calls run with the value now and on every change, and returns the
// unsubscribe function). The poller starts with the first subscriber and stops after the last
// one leaves; no svelte import is needed. The value given at once is idle until the poller has
// started (a microtask later): a server render subscribes and unsubscribes in one turn, so it
// renders idle, and the hydration render matches it.
import { firstSnapshot, getSnapshot, pollerKey, subscribe } from "./poller-store.js";

/** A store of the poller's state (`{ status, rows, run, error, … }`) for `$poller` in a component. */
export function createJobPoller(options) {
  const key = pollerKey(options);
  const ref = { current: options };
  return {
    subscribe(run) {
      let last = firstSnapshot(key);
      run(last);
      const push = () => {
        const next = getSnapshot(key);
        if (next !== last) run((last = next));
      };
      const unsubscribe = subscribe(key, ref, push);
      return unsubscribe;
    },
  };
}
