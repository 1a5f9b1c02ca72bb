// The worker's settings, read from its bindings (wrangler.toml [vars] and secrets) with defaults.
// A wrong setting is a configuration fault, not an outage: it is listed (by name, never with a
// secret's value) so the steps, the logs, the runs' error_message and GET /health can say which.

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
  MAX_STREAM_VIEWERS: 10000,
});

/** Required secrets (wrangler secret put NAME) and whether a poll step needs them. */
const SECRETS = Object.freeze({
  CAPTAINDATA_API_KEY: { polling: true },
  CAPTAINDATA_PROJECT_ID: { polling: true },
  WEBHOOK_SECRET: { polling: false },
  READ_TOKEN_SECRET: { polling: false },
  ADMIN_TOKEN: { polling: false },
});

/** A setting that is missing or wrong; `setting` is its binding name. */
export class ConfigError extends Error {
  constructor(setting, message) {
    super(message);
    this.name = "ConfigError";
    this.setting = setting;
  }
}

/** A required secret that is not set; the message names it but never shows a value. */
export class MissingSecret extends ConfigError {
  constructor(name) {
    super(name, `The worker secret ${name} is not set (wrangler secret put ${name})`);
    this.name = "MissingSecret";
  }
}

/**
 * @typedef {{ setting: string, message: string, polling: boolean }} Problem
 *   `polling`: no run can be polled while this problem lasts.
 */

/** A non-negative integer setting; a bad value is listed and the default used meanwhile. */
function count(env, name, problems) {
  const raw = env[name];
  if (raw === undefined || raw === "") return DEFAULTS[name];
  const value = Number(raw);
  if (Number.isInteger(value) && value >= 0) return value;
  problems.push({ setting: name, message: `The worker setting ${name} must be an integer ≥ 0 (it is ${JSON.stringify(String(raw))})`, polling: true });
  return DEFAULTS[name];
}

/** The API base URL: http(s) and absolute. Its value is not echoed (it could hold credentials). */
function baseUrl(env, problems) {
  const raw = env.CAPTAINDATA_BASE_URL;
  if (raw === undefined || raw === "") return DEFAULTS.CAPTAINDATA_BASE_URL;
  let url = null;
  try {
    url = new URL(String(raw));
  } catch {
    // listed below
  }
  if (url && ["https:", "http:"].includes(url.protocol)) return String(raw);
  problems.push({ setting: "CAPTAINDATA_BASE_URL", message: "The worker setting CAPTAINDATA_BASE_URL must be an absolute http(s) URL", polling: true });
  return DEFAULTS.CAPTAINDATA_BASE_URL;
}

/** Allowed CORS origins; an entry that is not an origin (`https://host[:port]`) is listed and left out. */
function origins(env, problems) {
  const list = String(env.ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  const valid = list.filter((o) => {
    try {
      return new URL(o).origin === o;
    } catch {
      return false;
    }
  });
  for (const o of list.filter((x) => !valid.includes(x))) {
    problems.push({ setting: "ALLOWED_ORIGINS", message: `The worker setting ALLOWED_ORIGINS lists ${JSON.stringify(o)}, which is not an origin (scheme://host[:port])`, polling: false });
  }
  return new Set(valid);
}

function secretProblems(env) {
  return Object.entries(SECRETS)
    .filter(([name]) => typeof env[name] !== "string" || env[name] === "")
    .map(([name, { polling }]) => ({ setting: name, message: new MissingSecret(name).message, polling }));
}

/**
 * The settings, never throwing: a wrong value is replaced by its default and listed in
 * `problems` (with the missing secrets), which a step checks before it polls.
 * @param {Record<string, unknown>} env the worker's bindings
 */
export function settings(env) {
  /** @type {Problem[]} */
  const problems = [];
  const budget = Math.max(1, count(env, "SUBREQUEST_BUDGET", problems));
  const values = {
    baseUrl: baseUrl(env, problems),
    // A step's only subrequests are pollStep's fetches (the registry retires ended runs itself).
    stepRequests: budget,
    // Each kick of a run is one subrequest of the registry's alarm.
    fanoutChunk: count(env, "FANOUT_CHUNK", problems) || budget,
    stepDeadlineMs: count(env, "STEP_DEADLINE_MS", problems),
    pollIntervalMs: count(env, "POLL_INTERVAL_MS", problems),
    pageSize: Math.max(1, count(env, "PAGE_SIZE", problems)),
    maxFailedSteps: Math.max(1, count(env, "MAX_FAILED_STEPS", problems)),
    failedStepBackoffMs: count(env, "FAILED_STEP_BACKOFF_MS", problems),
    timeoutMs: count(env, "REQUEST_TIMEOUT_MS", problems),
    retry: {
      retries: count(env, "RETRY_RETRIES", problems),
      minDelayMs: count(env, "RETRY_MIN_DELAY_MS", problems),
      maxDelayMs: count(env, "RETRY_MAX_DELAY_MS", problems),
    },
    allowedOrigins: origins(env, problems),
    // Sockets one run's stream holds at most (a Durable Object holds up to 32,768).
    maxStreamViewers: count(env, "MAX_STREAM_VIEWERS", problems),
    // A row field that identifies a row: lets pollStep drop rows the API repeats across pages.
    rowKey: env.ROW_KEY ? String(env.ROW_KEY) : undefined,
  };
  return { ...values, problems: [...secretProblems(env), ...problems] };
}

/** What pollStep and scheduleWorkflow need to reach Captain Data. The key stays in headers. */
export function connection(env) {
  const s = settings(env);
  const wrong = s.problems.find((p) => p.polling);
  if (wrong) throw new ConfigError(wrong.setting, wrong.message);
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
