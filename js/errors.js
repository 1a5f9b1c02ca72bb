// The one error class of the package: every terminal error the glue, the tab layer, the
// bindings and the CLI report is a `CaptainDataError`, so `err instanceof CaptainDataError`
// works whichever entry made it — also across copies of this file (the browser entry is one
// bundled file, the bindings load their own; a bundler may hold two copies of the package).

// The message of every ABORTED error: the engine's ABORTED_TEXT, generated into js/rules.js.
import { ABORTED_TEXT } from "./rules.js";
export { ABORTED_TEXT };

const BRAND = Symbol.for("captaindata-poller.CaptainDataError");

/** A terminal error with a stable `code` (one of ERROR_CODES), `status`, `runStatus`, `cause`. */
export class CaptainDataError extends Error {
  /** Any copy's error is an instance of every copy's class. */
  static [Symbol.hasInstance](value) {
    return value instanceof Error && value[BRAND] === true;
  }

  get [BRAND]() {
    return true;
  }

  constructor(code, message, { status, runStatus, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "CaptainDataError";
    this.code = code;
    if (status !== undefined) this.status = status;
    if (runStatus !== undefined) this.runStatus = runStatus;
  }
}

/** ABORTED, `cause` = the signal's reason: what an aborted AbortSignal rejects with. */
export function abortedError(reason) {
  return new CaptainDataError("ABORTED", ABORTED_TEXT, { cause: reason });
}

/**
 * The glue's errors are plain `Error`s named "CaptainDataError" (made in Rust); this gives
 * them the class's prototype, keeping the object, its message, stack and `cause` as they are.
 * Anything else (a TypeError from a bad option) is returned unchanged.
 */
export function asCaptainDataError(error) {
  if (error instanceof Error && error.name === "CaptainDataError" && !(error instanceof CaptainDataError)) {
    Object.setPrototypeOf(error, CaptainDataError.prototype);
  }
  return error;
}
