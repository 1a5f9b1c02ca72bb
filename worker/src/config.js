// The worker's settings, read from its bindings (wrangler.toml [vars] and secrets) with defaults.
// A wrong setting is a configuration fault, not an outage: it is listed (by name, never with a
// secret's value) so the steps, the logs, the runs' error_message and GET /health can say which.

import { DEFAULTS as PACKAGE_DEFAULTS, STEP_DEFAULTS } from "captaindata-poller/rules";

const DEFAULTS = Object.freeze({
  // The package's own defaults: a poller's base URL, a step's request and time budgets.
  CAPTAINDATA_BASE_URL: PACKAGE_DEFAULTS.baseUrl,
  SUBREQUEST_BUDGET: STEP_DEFAULTS.maxRequests,
  STEP_DEADLINE_MS: STEP_DEFAULTS.deadlineMs,
  POLL_INTERVAL_MS: 15000,
  PAGE_SIZE: 1000,
  FANOUT_CHUNK: 0, // 0: derived from the subrequest budget
  MAX_FAILED_STEPS: 20,
  FAILED_STEP_BACKOFF_MS: 2000,
  REQUEST_TIMEOUT_MS: 20000,
  RETRY_RETRIES: 3,
  RETRY_MIN_DELAY_MS: 1000,
  RETRY_MAX_DELAY_MS: 10000,
  MAX_STREAM_VIEWERS: 10000, // 0: no cap
  MAX_STREAM_VIEWERS_PER_TOKEN: 100, // 0: no cap
  // Personal data: how long a run's rows are kept after it ends, and how much is kept at all.
  RETENTION_DAYS: 30,
  MAX_ROWS_PER_RUN: 1_000_000, // 0: no cap
  MAX_TRACKED_RUNS: 10_000, // 0: no cap
  // A read token's life when /track names none (its body's `expires_in`).
  READ_TOKEN_TTL_SECONDS: 86_400,
  // Webhooks: at most one webhook-triggered step of a run per this many ms.
  WEBHOOK_MIN_GAP_MS: 10_000,
});

/** The longest life a read token can be given (a year), whatever `expires_in` asks. */
export const MAX_READ_TOKEN_TTL_SECONDS = 365 * 86_400;

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

/**
 * A non-negative integer setting; a bad value is listed and the default used meanwhile. The
 * value is shown to operators only (GET /health, the logs), never to readers.
 */
function count(env, name, problems) {
  const raw = env[name];
  if (raw === undefined || raw === "") return DEFAULTS[name];
  const value = Number(raw);
  if (Number.isInteger(value) && value >= 0) return value;
  problems.push({ setting: name, message: `The worker setting ${name} must be an integer ≥ 0 (it is ${JSON.stringify(String(raw))})`, polling: true });
  return DEFAULTS[name];
}

/** RETENTION_DAYS in ms: a number of days > 0, decimals allowed (0.5 = 12 hours). */
function retentionMs(env, problems) {
  const raw = env.RETENTION_DAYS;
  const value = raw === undefined || raw === "" ? DEFAULTS.RETENTION_DAYS : Number(raw);
  if (Number.isFinite(value) && value > 0) return Math.round(value * 86_400_000);
  problems.push({ setting: "RETENTION_DAYS", message: `The worker setting RETENTION_DAYS must be a number of days > 0 (it is ${JSON.stringify(String(raw))})`, polling: false });
  return DEFAULTS.RETENTION_DAYS * 86_400_000;
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

/** READ_TOKEN_TTL_SECONDS: 1 s to a year; another value is listed and the default used. */
function tokenTtl(env, problems) {
  const ttl = count(env, "READ_TOKEN_TTL_SECONDS", problems);
  if (ttl >= 1 && ttl <= MAX_READ_TOKEN_TTL_SECONDS) return ttl;
  problems.push({ setting: "READ_TOKEN_TTL_SECONDS", message: `The worker setting READ_TOKEN_TTL_SECONDS must be from 1 to ${MAX_READ_TOKEN_TTL_SECONDS} seconds (it is ${ttl})`, polling: false });
  return DEFAULTS.READ_TOKEN_TTL_SECONDS;
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

// The key and the project id travel as header values: bytes, no NUL, CR or LF (fetch refuses the rest).
const HEADER_SECRETS = ["CAPTAINDATA_API_KEY", "CAPTAINDATA_PROJECT_ID"];
const NOT_IN_A_HEADER = /[\0\r\n]|[^\x00-\xff]/;

function secretProblems(env) {
  const missing = Object.entries(SECRETS)
    .filter(([name]) => typeof env[name] !== "string" || env[name] === "")
    .map(([name, { polling }]) => ({ setting: name, message: new MissingSecret(name).message, polling }));
  const unsendable = HEADER_SECRETS.filter((name) => typeof env[name] === "string" && NOT_IN_A_HEADER.test(env[name])).map((name) => ({
    setting: name,
    message: `The worker secret ${name} holds a character a header value cannot (NUL, CR, LF or one past U+00FF); its value is not shown`,
    polling: true,
  }));
  return [...missing, ...unsendable];
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
    // Sockets one run's stream holds at most (a Durable Object holds up to 32,768), and per read token.
    maxStreamViewers: count(env, "MAX_STREAM_VIEWERS", problems) || Infinity,
    maxStreamViewersPerToken: count(env, "MAX_STREAM_VIEWERS_PER_TOKEN", problems) || Infinity,
    // A row field that identifies a row: lets pollStep drop rows the API repeats across pages.
    rowKey: env.ROW_KEY ? String(env.ROW_KEY) : undefined,
    retentionMs: retentionMs(env, problems),
    maxRowsPerRun: count(env, "MAX_ROWS_PER_RUN", problems) || Infinity,
    maxTrackedRuns: count(env, "MAX_TRACKED_RUNS", problems) || Infinity,
    readTokenTtlSeconds: tokenTtl(env, problems),
    webhookMinGapMs: count(env, "WEBHOOK_MIN_GAP_MS", problems),
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

/** The names of the secrets the worker needs (`wrangler secret put NAME`, or `.dev.vars`). */
export const SECRET_NAMES = Object.freeze(Object.keys(SECRETS));

// Optional secrets: never required, redacted all the same.
const OPTIONAL_SECRETS = ["WEBHOOK_SIGNING_SECRET", "CAPTAINDATA_V4_API_KEY"];

/**
 * `text` without the value of any secret (the project id is one, like the key): for every
 * message that can reach a log line or an answer, whatever produced it.
 */
export function redacted(env, text) {
  let out = String(text);
  for (const name of [...SECRET_NAMES, ...OPTIONAL_SECRETS]) {
    const value = env[name];
    if (typeof value === "string" && value.length >= 4) out = out.split(value).join(`[${name}]`);
  }
  return out;
}

// pollStep's and scheduleWorkflow's options, by the setting that fills them.
const SETTING_OF_OPTION = {
  apiKey: "CAPTAINDATA_API_KEY",
  projectId: "CAPTAINDATA_PROJECT_ID",
  baseUrl: "CAPTAINDATA_BASE_URL",
  timeoutMs: "REQUEST_TIMEOUT_MS",
  maxRequests: "SUBREQUEST_BUDGET",
  deadlineMs: "STEP_DEADLINE_MS",
  rowKey: "ROW_KEY",
  retry: "RETRY_RETRIES, RETRY_MIN_DELAY_MS or RETRY_MAX_DELAY_MS",
};

/**
 * A setting the package refused (its `TypeError` names the option, "Expected `projectId` to be
 * …", and may quote the value): the setting, named without the value.
 */
export function refusedSetting(error) {
  const option = /`([A-Za-z]+)[.`]/.exec(String(error?.message ?? ""))?.[1];
  const setting = SETTING_OF_OPTION[option] ?? "a worker setting";
  return new ConfigError(setting, `The worker setting ${setting} was refused by the package (${error?.name ?? "Error"})`);
}
