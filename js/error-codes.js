// Every `error.code` a CaptainDataError can carry, and which of them are final: the crate's
// lists (`ErrorCode::ALL`, `ErrorCode::is_final`), generated into js/rules.js.

export { ERROR_CODES, FINAL_ERROR_CODES } from "./rules.js";
import { FINAL_ERROR_CODES } from "./rules.js";

/** True when `error` (a CaptainDataError, or anything) carries a final code. */
export function isFinalError(error) {
  return FINAL_ERROR_CODES.includes(error?.code);
}
