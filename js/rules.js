// Generated from the crate by `node scripts/rules.mjs` (scripts/rules.rs): do not edit, change the
// rule in Rust and run it again. tests/rules-drift.test.mjs fails when this file, or a copy of one
// of its values elsewhere in the repository, differs from the crate.

/** Every `error.code`, in a stable order. */
export const ERROR_CODES = /* @__PURE__ */ Object.freeze([
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
  "ROWS_MISSING",
  "ROWS_CAP_REACHED"
]);

/** The codes that polling again with the same options cannot change. */
export const FINAL_ERROR_CODES = /* @__PURE__ */ Object.freeze([
  "ALL_INPUTS_FAILED",
  "JOB_FAILED",
  "UNAUTHORIZED",
  "NOT_FOUND"
]);

/** The class of each documented v3 run status (any other status is `"active"`). */
export const RUN_STATUS_CLASSES = /* @__PURE__ */ Object.freeze({
  "completed": "succeeded",
  "finished": "succeeded",
  "paused": "paused",
  "pending": "active",
  "running": "active",
  "shutdown": "failed",
  "stopped": "failed",
  "warning": "succeeded"
});

/** The words that mark a run's `error_message` as All Inputs Failed, in any case. */
export const ALL_INPUTS_FAILED_TEXT = "all inputs failed";

/** Each documented v4 run status: its class, the v3 status a reader is shown, the final error of a failure. */
export const V4_STATUSES = /* @__PURE__ */ Object.freeze({
  "BLOCKED": /* @__PURE__ */ Object.freeze({
    "class": "paused",
    "errorCode": null,
    "v3Status": "paused"
  }),
  "CREATED": /* @__PURE__ */ Object.freeze({
    "class": "active",
    "errorCode": null,
    "v3Status": "pending"
  }),
  "FAILED": /* @__PURE__ */ Object.freeze({
    "class": "failed",
    "errorCode": "JOB_FAILED",
    "v3Status": "shutdown"
  }),
  "INVALID": /* @__PURE__ */ Object.freeze({
    "class": "failed",
    "errorCode": "ALL_INPUTS_FAILED",
    "v3Status": "shutdown"
  }),
  "PARTIAL_SUCCEEDED": /* @__PURE__ */ Object.freeze({
    "class": "succeeded",
    "errorCode": null,
    "v3Status": "warning"
  }),
  "QUEUED": /* @__PURE__ */ Object.freeze({
    "class": "active",
    "errorCode": null,
    "v3Status": "pending"
  }),
  "RUNNING": /* @__PURE__ */ Object.freeze({
    "class": "active",
    "errorCode": null,
    "v3Status": "running"
  }),
  "SCHEDULED": /* @__PURE__ */ Object.freeze({
    "class": "active",
    "errorCode": null,
    "v3Status": "pending"
  }),
  "STOPPED": /* @__PURE__ */ Object.freeze({
    "class": "failed",
    "errorCode": "JOB_FAILED",
    "v3Status": "stopped"
  }),
  "SUCCEEDED": /* @__PURE__ */ Object.freeze({
    "class": "succeeded",
    "errorCode": null,
    "v3Status": "finished"
  })
});

/** A poller's default options (`JobPoller`; `null`: none). */
export const DEFAULTS = /* @__PURE__ */ Object.freeze({
  "baseUrl": "https://api.captaindata.co/v3",
  "hiddenIntervalMs": 60000,
  "intervalMs": 10000,
  "maxDurationMs": 21600000,
  "maxRequests": null,
  "pageSize": 1000,
  "readMode": "status",
  "retry": /* @__PURE__ */ Object.freeze({
    "maxDelayMs": 60000,
    "minDelayMs": 1000,
    "retries": 5
  }),
  "statusEvery": 5,
  "timeoutMs": 30000
});

/** A step's defaults (`pollStep`): its request and time budgets. */
export const STEP_DEFAULTS = /* @__PURE__ */ Object.freeze({
  "deadlineMs": 25000,
  "maxRequests": 50,
  "readMode": "status"
});

/** The engine's ABORTED message. */
export const ABORTED_TEXT = "aborted by the AbortSignal";

/** The engine's BUDGET_EXHAUSTED message, `{name}` standing for a value. */
export const BUDGET_EXHAUSTED_TEXT = "sent maxRequests ({maxRequests}) requests";

/** The engine's CALLBACK_FAILED message, `{name}` standing for a value. */
export const CALLBACK_FAILED_TEXT = "onBatch (or the iterator) failed on rows {from}..{to}; the cursor stays before them";

/** The engine's TIMEOUT message, `{name}` standing for a value. */
export const TIMEOUT_TEXT = "gave up after maxDurationMs ({maxDurationMs} ms)";

/** The engine's WEBHOOK_OF_ANOTHER_RUN message. */
export const WEBHOOK_OF_ANOTHER_RUN_TEXT = "The webhook payload's `job_uid` is not this poller's `jobUid`";

/** The class of a v3 run status, in any case: active, paused, succeeded or failed. */
export function classifyStatus(status) {
  const word = String(status ?? "").toLowerCase();
  return Object.hasOwn(RUN_STATUS_CLASSES, word) ? RUN_STATUS_CLASSES[word] : "active";
}

/** True when `message` says All Inputs Failed (any case): no retry can help. */
export const isAllInputsFailed = (message) => String(message ?? "").toLowerCase().includes(ALL_INPUTS_FAILED_TEXT);

/** `text` (one of the `*_TEXT` messages) with its `{name}`s filled from `values`. */
export const fillText = (text, values) => text.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
