// Where a poller's rows, statuses and outcome go: the user's callbacks and the async iterator.
// The one place that calls them: the lone wasm poller hands every batch and status here, and
// so does the tab layer for a tab whose rows come from another tab.
//
// A batch goes to `onBatch`, then to the iterator, each awaited (backpressure). If either
// throws or rejects, `batch()` throws or rejects with that value: the engine then ends the
// poll with CALLBACK_FAILED and keeps the cursor before the batch. `onStatus`, `onComplete`
// and `onError` are not awaited; their failures go to `onCallbackError` (or console.error).

import { invalid, object, read } from "./options.js";

const CALLBACKS = ["onBatch", "onStatus", "onComplete", "onError", "onCallbackError"].map((name) => [name, "function"]);

/**
 * `onStatus`'s frozen `RunStatus` from what the wasm tells (the tab layer copies it into an
 * object with the same order, hence `Object.values`), and the last status told:
 * - a status read, `[status, rowCount, totalRowCount, numberInputs, errorMessage, pausedForMs,
 *   body]`: the engine's reading, and the descriptive fields copied from the run's body;
 * - a retry scheduled, `[attempt, retries, delayMs, code, message, HTTP status or null]`: the
 *   last status with its `retrying`;
 * - `null` (or nothing), an answer came after retries: the last status, `retrying: null`.
 */
function runStatus(told, last) {
  const [status, a, b, c, d, e, body] = Object.values(told ?? {});
  if (typeof status !== "string") {
    // a retry: [attempt, retries, delayMs, code, message, HTTP status or null]
    const error = { code: c, message: d };
    if (e !== null) error.status = e;
    return { ...last, retrying: status ? Object.freeze({ attempt: status, retries: a, delayMs: b, error }) : null };
  }
  // a status read: [status, rowCount, totalRowCount, numberInputs, errorMessage, pausedForMs, body]
  const copy = (key) => body?.[key] ?? null;
  const run = {
    status,
    rowCount: a,
    totalRowCount: b,
    numberInputs: c,
    errorMessage: d,
    name: copy("name"),
    uid: copy("uid"),
    workflowUid: copy("workflow_uid"),
    startTime: copy("start_time"),
    finishTime: copy("finish_time"),
    retrying: null,
  };
  if (e !== null) run.pausedForMs = e;
  return run;
}

/** Only objects are awaited: a function with a `then` member is a plain value. */
function isThenable(value) {
  return typeof value === "object" && value !== null && typeof value.then === "function";
}

export class Delivery {
  #options;
  #sink = null;
  #ended = false;
  #run = runStatus(["unknown", null, null, null, null, null]); // before a status read

  /** Checks the options object and its callbacks (they are used here only). */
  constructor(options) {
    if (Array.isArray(options)) throw invalid("options", "an object", options);
    read(object("options", options), CALLBACKS);
    this.#options = options;
  }

  /** The async iterator's hand-off: called after `onBatch`, returns a promise. */
  setSink(sink) {
    this.#sink = sink;
  }

  /**
   * Hands `batch` to `onBatch`, then to the iterator. Returns `undefined` when both took it
   * at once, else a promise; throws or rejects with what a consumer threw.
   */
  batch(batch) {
    const taken = this.#options.onBatch?.(batch);
    if (isThenable(taken)) return Promise.resolve(taken).then(() => this.sink(batch));
    return this.sink(batch);
  }

  /** The iterator's part of a batch (see `batch`). */
  sink(batch) {
    const taken = this.#sink?.(batch);
    return isThenable(taken) ? Promise.resolve(taken).then(() => undefined) : undefined;
  }

  /** The run's status or counts changed, or a retry began or ended (see `runStatus`). */
  status(told) {
    this.#run = Object.freeze(runStatus(told, this.#run));
    this.#fire("onStatus", this.#run);
  }

  /**
   * The poller ended: `onComplete(summary)` or `onError(error)`, once. A stopped poller's
   * summary calls neither (stop() is not an event of the run).
   */
  end({ summary, error }) {
    if (this.#ended) return;
    this.#ended = true;
    if (error) this.#fire("onError", error);
    else if (summary.status !== "stopped") this.#fire("onComplete", summary);
  }

  /** This tab's part in a poller shared by tabs changed (js/tabs.js): `onRoleChange`. */
  role(role, tabs) {
    this.#fire("onRoleChange", Object.freeze({ role, tabs }));
  }

  /** A callback's failure that does not end the poll: `onCallbackError`, else console.error. */
  report(error, name) {
    const { onCallbackError } = this.#options;
    try {
      if (onCallbackError) return void onCallbackError(error, name);
    } catch (again) {
      error = again;
      name = "onCallbackError";
    }
    console.error(`captaindata-poller: the \`${name}\` callback failed:`, error);
  }

  #fire(name, arg) {
    const callback = this.#options[name];
    if (!callback) return;
    try {
      const result = callback(arg);
      if (isThenable(result)) result.then(undefined, (error) => this.report(error, name));
    } catch (error) {
      this.report(error, name);
    }
  }
}
