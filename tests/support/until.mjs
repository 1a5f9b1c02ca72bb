// One way for every suite to wait: for a condition, never for a duration. A condition is checked
// when something it depends on changes (the simulator's log, the package's timers) or, for what
// can only be asked (a page, a worker over HTTP, a process's output), every `everyMs`. The bound
// (`timeoutMs`) is there for a stuck test only: reaching it fails the test, naming `what`.
import { clearTimeout, setImmediate, setTimeout } from "node:timers";

/**
 * Resolves with `check()`'s value once it is truthy. `check` may return a promise (it is then
 * never run twice at once). Checked now (after the microtasks queued so far with
 * `{ settled: true }`), after every change reported by a source of `on`, and every `everyMs` if
 * given. Rejects with `check`'s error, or after `timeoutMs` naming `what` (and `detail()` if given).
 * @template T
 * @param {() => T | Promise<T>} check
 * @param {{ on?: Array<(recheck: () => void) => () => void>, everyMs?: number, timeoutMs?: number,
 *   what?: string, detail?: () => string, settled?: boolean }} [options]
 * @returns {Promise<T>}
 */
export function until(check, { on = [], everyMs, timeoutMs = 30000, what = "a condition", detail, settled = false } = {}) {
  return new Promise((resolve, reject) => {
    let over = false;
    let running = false;
    let again = false;
    const unsubscribes = [];
    const finish = () => {
      over = true;
      clearTimeout(bound);
      clearTimeout(ticker);
      for (const unsubscribe of unsubscribes) unsubscribe();
    };
    const fail = (error) => {
      if (over) return;
      finish();
      reject(error);
    };
    const succeed = (value) => {
      if (over) return;
      finish();
      resolve(value);
    };
    let ticker;
    const recheck = () => {
      if (over) return;
      if (running) return void (again = true);
      let value;
      try {
        value = check();
      } catch (error) {
        return fail(error);
      }
      if (!(value instanceof Promise)) return value ? succeed(value) : undefined;
      running = true;
      value.then(
        (v) => {
          running = false;
          if (v) return succeed(v);
          if (again) {
            again = false;
            recheck();
          }
        },
        (error) => fail(error),
      );
    };
    const bound = setTimeout(() => {
      const more = detail ? ` (${detail()})` : "";
      fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${more}`));
    }, timeoutMs);
    // The bound alone keeps no process alive: a waiter given up on (its test ended) is no reason to stay.
    bound.unref?.();
    for (const source of on) unsubscribes.push(source(recheck));
    if (everyMs) {
      const tick = () => {
        recheck();
        if (!over) ticker = setTimeout(tick, everyMs);
      };
      ticker = setTimeout(tick, everyMs);
    }
    if (settled) setImmediate(recheck);
    else recheck();
  });
}

/** A source for `until`: every change of the simulator's request or webhook log. */
export function simChanges(sim) {
  return (recheck) => {
    let stopped = false;
    let first = true; // the simulator checks once at once: not a change
    // The simulator calls its waiters' checks on every change; this one never resolves until unsubscribed.
    const onChange = () => {
      if (stopped) return true;
      if (first) first = false;
      else recheck();
      return false;
    };
    sim.until(onChange, { timeoutMs: 2 ** 31 - 1, what: "the test's waiter" }).catch(() => {});
    return () => {
      stopped = true;
    };
  };
}

/**
 * A source for `until`: every change of the package's pending timers (a tracker from
 * `./timers.mjs`), seen once the microtasks it starts have run (a woken poller sends its next
 * request in them).
 */
export function timerChanges(tracker) {
  return (recheck) => {
    let queued = false;
    return tracker.onChange(() => {
      if (queued) return;
      queued = true;
      setImmediate(() => {
        queued = false;
        recheck();
      });
    });
  };
}
