// The package's timers, seen from outside: one tracker for every suite (Node and, through
// `addInitScript`, a page). Every request the package sends holds a timer (its `timeoutMs`) from
// before it is sent until its body is read, and a poller between polls holds its sleep; those are
// the only things that can make it send a request. So "asleep between polls" and "nothing left
// that could send a request" are conditions on the timers the package has pending, not durations.
// Timers are told apart by who arms them: the frame that calls `setTimeout` is one of the
// package's files, or the glue a few frames above the wasm. The simulator's, node:test's and the
// tests' own timers do not count, even those armed from a callback the package calls.

/** The package's files as they appear in stack frames: the sources (js/), the build (dist/, pkg/). */
export const PACKAGE_CODE = String.raw`\/(js|dist|pkg)\/[\w.-]+\.js`;

/**
 * Wraps `setTimeout`/`clearTimeout` of `globalThis` once and returns the tracker (the same one on
 * later calls), also kept as `globalThis.__packageTimers`. Self-contained (no imports, no outer
 * names) so a page can run it: `context.addInitScript(trackPackageTimers, PACKAGE_CODE)`.
 *
 * The tracker: `pending()` the delays in ms of the package's pending timers; `onChange(fn)` calls
 * `fn` after every change (returns an unsubscribe); `counts` of the timers set, cleared and fired;
 * `setTimeout`/`clearTimeout` the real ones.
 * @param {string} [packageCode] a RegExp source matching the package's files in a stack frame
 */
export function trackPackageTimers(packageCode = String.raw`\/(js|dist|pkg)\/[\w.-]+\.js`) {
  const scope = globalThis;
  if (scope.__packageTimers) return scope.__packageTimers;
  const isPackageFile = new RegExp(packageCode);
  const realSetTimeout = scope.setTimeout;
  const realClearTimeout = scope.clearTimeout;
  const pending = new Map(); // id → delay in ms
  const listeners = new Set();
  const counts = { set: 0, cleared: 0, fired: 0 };
  const changed = () => {
    for (const listener of [...listeners]) listener();
  };
  // Frame 0 is "Error", 1 this function, 2 the wrapper, 3 the caller of setTimeout.
  const armedByPackage = () => {
    const frames = (new Error().stack ?? "").split("\n").slice(3, 9);
    return isPackageFile.test(frames[0] ?? "") || frames.some((frame) => frame.includes("wasm-function["));
  };
  scope.setTimeout = function setTimeout(fn, ms, ...rest) {
    if (!armedByPackage()) return realSetTimeout(fn, ms, ...rest);
    counts.set += 1;
    const id = realSetTimeout(
      (...args) => {
        pending.delete(id);
        counts.fired += 1;
        changed();
        return fn(...args);
      },
      ms,
      ...rest,
    );
    pending.set(id, Number(ms ?? 0));
    changed();
    return id;
  };
  scope.clearTimeout = function clearTimeout(id) {
    if (pending.delete(id)) {
      counts.cleared += 1;
      changed();
    }
    return realClearTimeout(id);
  };
  const tracker = {
    pending: () => [...pending.values()],
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    counts,
    setTimeout: realSetTimeout,
    clearTimeout: realClearTimeout,
  };
  scope.__packageTimers = tracker;
  return tracker;
}
