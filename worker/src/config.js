// The worker's settings, read from its bindings (wrangler.toml [vars] and secrets) with defaults.

const DEFAULTS = Object.freeze({
  CAPTAINDATA_BASE_URL: "https://api.captaindata.co/v3",
  SUBREQUEST_BUDGET: 50,
  STEP_DEADLINE_MS: 25000,
  POLL_INTERVAL_MS: 15000,
  PAGE_SIZE: 1000,
  FANOUT_CHUNK: 0, // 0: derived from the subrequest budget
  MAX_FAILED_STEPS: 20,
  FAILED_STEP_BACKOFF_MS: 2000,
  REQUEST_TIMEOUT_MS: 20000,
  RETRY_RETRIES: 3,
  RETRY_MIN_DELAY_MS: 1000,
  RETRY_MAX_DELAY_MS: 10000,
});

/** A non-negative integer setting; a bad value is a deploy error worth failing loudly on. */
function count(env, name) {
  const raw = env[name];
  if (raw === undefined || raw === "") return DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new TypeError(`Expected worker setting \`${name}\` to be an integer ≥ 0 (got ${raw})`);
  return value;
}

function origins(env) {
  return new Set(
    String(env.ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((o) => o.trim())
      .filter(Boolean),
  );
}

/**
 * @param {Record<string, unknown>} env the worker's bindings
 */
export function settings(env) {
  const budget = Math.max(1, count(env, "SUBREQUEST_BUDGET"));
  return {
    baseUrl: String(env.CAPTAINDATA_BASE_URL || DEFAULTS.CAPTAINDATA_BASE_URL),
    // A step's only subrequests are pollStep's fetches (the registry retires ended runs itself).
    stepRequests: budget,
    // Each kick of a run is one subrequest of the registry's alarm.
    fanoutChunk: count(env, "FANOUT_CHUNK") || budget,
    stepDeadlineMs: count(env, "STEP_DEADLINE_MS"),
    pollIntervalMs: count(env, "POLL_INTERVAL_MS"),
    pageSize: Math.max(1, count(env, "PAGE_SIZE")),
    maxFailedSteps: Math.max(1, count(env, "MAX_FAILED_STEPS")),
    failedStepBackoffMs: count(env, "FAILED_STEP_BACKOFF_MS"),
    timeoutMs: count(env, "REQUEST_TIMEOUT_MS"),
    retry: {
      retries: count(env, "RETRY_RETRIES"),
      minDelayMs: count(env, "RETRY_MIN_DELAY_MS"),
      maxDelayMs: count(env, "RETRY_MAX_DELAY_MS"),
    },
    allowedOrigins: origins(env),
    // A row field that identifies a row: lets pollStep drop rows the API repeats across pages.
    rowKey: env.ROW_KEY ? String(env.ROW_KEY) : undefined,
  };
}

/** What pollStep and scheduleWorkflow need to reach Captain Data. The key stays in headers. */
export function connection(env) {
  const s = settings(env);
  return {
    apiKey: secret(env, "CAPTAINDATA_API_KEY"),
    projectId: secret(env, "CAPTAINDATA_PROJECT_ID"),
    baseUrl: s.baseUrl,
    timeoutMs: s.timeoutMs,
  };
}

/** A required secret; the error names it but never shows a value. */
export function secret(env, name) {
  const value = env[name];
  if (typeof value !== "string" || value === "") throw new MissingSecret(name);
  return value;
}

export class MissingSecret extends Error {
  constructor(name) {
    super(`The worker secret ${name} is not set (wrangler secret put ${name})`);
    this.name = "MissingSecret";
  }
}
