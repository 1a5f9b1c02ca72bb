// Generated from the crate by `node scripts/rules.mjs` (scripts/rules.rs): do not edit, change the
// rule in Rust and run it again. tests/rules-drift.test.mjs fails when this file, or a copy of one
// of its values elsewhere in the repository, differs from the crate.

const frozen = (value) => {
  for (const inner of Object.values(value)) if (inner && typeof inner === "object") frozen(inner);
  return Object.freeze(value);
};

/** Every `error.code`, in a stable order. */
export const ERROR_CODES = /* @__PURE__ */ frozen([
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
  "CALLBACK_FAILED"
]);

/** The codes that polling again with the same options cannot change. */
export const FINAL_ERROR_CODES = /* @__PURE__ */ frozen([
  "ALL_INPUTS_FAILED",
  "JOB_FAILED",
  "UNAUTHORIZED",
  "NOT_FOUND"
]);

/** The class of each documented v3 run status (any other status is `"active"`). */
export const RUN_STATUS_CLASSES = /* @__PURE__ */ frozen({
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
export const V4_STATUSES = /* @__PURE__ */ frozen({
  "BLOCKED": {
    "class": "paused",
    "errorCode": null,
    "v3Status": "paused"
  },
  "CREATED": {
    "class": "active",
    "errorCode": null,
    "v3Status": "pending"
  },
  "FAILED": {
    "class": "failed",
    "errorCode": "JOB_FAILED",
    "v3Status": "shutdown"
  },
  "INVALID": {
    "class": "failed",
    "errorCode": "ALL_INPUTS_FAILED",
    "v3Status": "shutdown"
  },
  "PARTIAL_SUCCEEDED": {
    "class": "succeeded",
    "errorCode": null,
    "v3Status": "warning"
  },
  "QUEUED": {
    "class": "active",
    "errorCode": null,
    "v3Status": "pending"
  },
  "RUNNING": {
    "class": "active",
    "errorCode": null,
    "v3Status": "running"
  },
  "SCHEDULED": {
    "class": "active",
    "errorCode": null,
    "v3Status": "pending"
  },
  "STOPPED": {
    "class": "failed",
    "errorCode": "JOB_FAILED",
    "v3Status": "stopped"
  },
  "SUCCEEDED": {
    "class": "succeeded",
    "errorCode": null,
    "v3Status": "finished"
  }
});

/** A poller's default options (`JobPoller`; `null`: none). */
export const DEFAULTS = /* @__PURE__ */ frozen({
  "baseUrl": "https://api.captaindata.co/v3",
  "hiddenIntervalMs": 60000,
  "intervalMs": 10000,
  "maxDurationMs": 21600000,
  "maxRequests": null,
  "pageSize": 1000,
  "readMode": "status",
  "retry": {
    "maxDelayMs": 60000,
    "minDelayMs": 1000,
    "retries": 5
  },
  "statusEvery": 5,
  "timeoutMs": 30000
});

/** A step's defaults (`pollStep`): its request and time budgets. */
export const STEP_DEFAULTS = /* @__PURE__ */ frozen({
  "deadlineMs": 25000,
  "maxRequests": 50,
  "readMode": "status"
});

/** The engine's error messages, `{name}` standing for a value. */
export const MESSAGES = /* @__PURE__ */ frozen({
  "ABORTED": "aborted by the AbortSignal",
  "BUDGET_EXHAUSTED": "sent maxRequests ({maxRequests}) requests",
  "CALLBACK_FAILED": "onBatch (or the iterator) failed on rows {from}..{to}; the cursor stays before them",
  "TIMEOUT": "gave up after maxDurationMs ({maxDurationMs} ms)"
});

/** The class of a v3 run status, in any case: active, paused, succeeded or failed. */
export function classifyStatus(status) {
  const word = String(status ?? "").toLowerCase();
  return Object.hasOwn(RUN_STATUS_CLASSES, word) ? RUN_STATUS_CLASSES[word] : "active";
}

/** True when `message` says All Inputs Failed (any case): no retry can help. */
export const isAllInputsFailed = (message) => String(message ?? "").toLowerCase().includes(ALL_INPUTS_FAILED_TEXT);

/** The engine's message for `code` with its `{name}`s filled from `values`. */
export const messageOf = (code, values = {}) => MESSAGES[code].replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
