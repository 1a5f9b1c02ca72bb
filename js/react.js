// `captaindata-poller/react`: useJobPoller(options | null), a thin adapter over poller-store.js.
// React renders from the store's cached snapshot through useSyncExternalStore; the server (and
// hydration) render the idle snapshot, so the wasm is never loaded there.
import { useCallback, useInsertionEffect, useRef, useSyncExternalStore } from "react";
import { IDLE, getSnapshot, pollerKey, subscribe } from "./poller-store.js";

const serverSnapshot = () => IDLE;

/**
 * Polls the run of `options.jobUid` while the component is mounted; `null` (or no `jobUid`) is
 * idle. Equal option values keep the same poller; callbacks are always the latest ones.
 */
export function useJobPoller(options) {
  const key = pollerKey(options);
  const ref = useRef(options);
  // The latest callbacks, read when the poller calls them (always after a commit); set in an
  // effect that runs first, not during render, which a discarded render would leave behind.
  useInsertionEffect(() => {
    ref.current = options;
  });
  const onSubscribe = useCallback((listener) => subscribe(key, ref, listener), [key]);
  const onSnapshot = useCallback(() => getSnapshot(key), [key]);
  return useSyncExternalStore(onSubscribe, onSnapshot, serverSnapshot);
}
