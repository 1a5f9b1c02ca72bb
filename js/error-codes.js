// Every `error.code` a CaptainDataError can carry, and which of them are final. The list
// mirrors `ErrorCode::ALL` and `ErrorCode::is_final` in src/api/error_code.rs; the native
// test tests/error_codes.rs fails when this file, index.d.ts or a user of the codes drifts.

/** Every `error.code`, in a stable order. */
export const ERROR_CODES = Object.freeze([
  "ALL_INPUTS_FAILED",
  "JOB_FAILED",
  "UNAUTHORIZED",
  "NOT_FOUND",
  "TIMEOUT",
  "BUDGET_EXHAUSTED",
  "RETRIES_EXHAUSTED",
  "BAD_RESPONSE",
  "ABORTED",
  "RATE_LIMITED",
  "SERVER_ERROR",
  "NETWORK_ERROR",
  "LOAD_FAILED",
  "CALLBACK_FAILED",
  "TOO_MANY_VIEWERS",
]);

/** The codes that polling again with the same options cannot change. */
export const FINAL_ERROR_CODES = Object.freeze(["ALL_INPUTS_FAILED", "JOB_FAILED", "UNAUTHORIZED", "NOT_FOUND"]);

/** True when `error` (a CaptainDataError, or anything) carries a final code. */
export function isFinalError(error) {
  return FINAL_ERROR_CODES.includes(error?.code);
}
