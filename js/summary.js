// What `start()` resolves with and `onComplete` receives (index.d.ts `Summary`), for every
// path built in JS: a poller stopped before the module loaded (js/poller.js) and a tab of a
// shared poller (js/tab-protocol.js, js/tabs-shared.js). The lone wasm poller returns the
// same fields (`Completion`, src/wasm/payloads.rs); tests/tab-protocol.test.mjs fails when
// the two differ.

/**
 * A frozen Summary with every field its type promises, in the wasm poller's order: `figures`
 * (some of `status`, `totalResults`, `requests`, `retries`, `durationMs`, `cursor`, each one
 * given defined) over a stop that counted nothing.
 */
export function summary(figures) {
  return Object.freeze({ status: "stopped", totalResults: 0, requests: 0, retries: 0, durationMs: 0, cursor: undefined, ...figures });
}
