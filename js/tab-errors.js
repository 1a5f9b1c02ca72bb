// The errors a tab of a shared poller words itself, in the engine's words: its own
// maxDurationMs or maxRequests (spent across the pollers it ran, or before a poller starts)
// and a consumer that failed on rows another tab read. One copy for the tab layer; the
// engine's texts are in src/engine/poller.rs, and tests/tab-protocol.test.mjs fails when a
// lone wasm poller words any of the three differently.

import { CaptainDataError } from "./errors.js";

/** TIMEOUT or BUDGET_EXHAUSTED: this tab's `maxDurationMs` or `maxRequests` ran out. */
export function limitError(code, { maxDurationMs, maxRequests }) {
  const message = code === "TIMEOUT" ? `gave up after maxDurationMs (${maxDurationMs} ms)` : `sent maxRequests (${maxRequests}) requests`;
  return new CaptainDataError(code, message);
}

/** CALLBACK_FAILED: this tab's onBatch (or iterator) failed on rows `from`..`to`; `cause` is what it threw. */
export function callbackFailed(from, to, cause) {
  const message = `onBatch (or the iterator) failed on rows ${from}..${to}; the cursor stays before them`;
  return new CaptainDataError("CALLBACK_FAILED", message, { cause });
}
