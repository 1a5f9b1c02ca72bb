// The errors a tab of a shared poller words itself, in the engine's words: its own
// maxDurationMs or maxRequests (spent across the pollers it ran, or before a poller starts)
// and a consumer that failed on rows another tab read. The texts are the engine's, generated into
// js/rules.js; tests/tab-protocol.test.mjs also checks them against a lone wasm poller's.

import { CaptainDataError } from "./errors.js";
import { BUDGET_EXHAUSTED_TEXT, CALLBACK_FAILED_TEXT, TIMEOUT_TEXT, fillText } from "./rules.js";

/** TIMEOUT or BUDGET_EXHAUSTED: this tab's `maxDurationMs` or `maxRequests` ran out. */
export function limitError(code, { maxDurationMs, maxRequests }) {
  return new CaptainDataError(code, fillText(code === "TIMEOUT" ? TIMEOUT_TEXT : BUDGET_EXHAUSTED_TEXT, { maxDurationMs, maxRequests }));
}

/** CALLBACK_FAILED: this tab's onBatch (or iterator) failed on rows `from`..`to`; `cause` is what it threw. */
export function callbackFailed(from, to, cause) {
  return new CaptainDataError("CALLBACK_FAILED", fillText(CALLBACK_FAILED_TEXT, { from, to }), { cause });
}
