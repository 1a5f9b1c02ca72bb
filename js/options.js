// The options of `JobPoller`, `pollStep` and `scheduleWorkflow` (its connection), checked here:
// a bad one is a TypeError naming it, the first in the order below. The wasm gets a fresh object
// of checked values under the same names (src/wasm/options.rs reads it as it is; `retry` is
// flattened, the credentials are in `headers`; js/step-options.js has pollStep's and
// scheduleWorkflow's): checking them in the wasm cost every page 2 KB of
// its download (docs/size.md). The engine still checks what it owns: the content of `jobUid`,
// `baseUrl` and `cursor`, and the interval against the base URL.

const MAX_TIMER_MS = 2 ** 31 - 1; // the longest delay setTimeout honours; longer ones fire at once

/**
 * How a refused value is shown in a TypeError. The credentials (`apiKey`, `projectId`) are shown
 * by type only: a message never echoes them (a worker would serve it to every reader of the run).
 */
export function describe(value, name) {
  if (name === "apiKey" || name === "projectId") return typeof value;
  if (typeof value === "string") return JSON.stringify(value.slice(0, 40));
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" && value !== null ? "an object" : String(value);
}

export const invalid = (name, expected, value) => new TypeError(`Expected \`${name}\` to be ${expected} (got ${describe(value, name)})`);

const positive = (max) => (n) => typeof n === "number" && n > 0 && n <= max;
const integer = (min, max) => (n) => Number.isInteger(n) && n >= min && n <= max;
const MS = "a positive number of milliseconds";

// What each kind of option accepts, how a message says it, and what the wasm gets (fractions of
// a millisecond round up).
const KINDS = {
  ms: [positive(MAX_TIMER_MS), MS, Math.ceil],
  duration: [positive(Number.MAX_SAFE_INTEGER), MS, Math.ceil], // may exceed a timer's range
  hidden: [(n) => n === Infinity || positive(MAX_TIMER_MS)(n), `${MS} or Infinity`, Math.ceil],
  count: [integer(1, 2 ** 32 - 1), "a positive integer"],
  retries: [integer(0, 1000), "a non-negative integer"],
  seed: [integer(0, Number.MAX_SAFE_INTEGER), "a non-negative integer"],
  text: [(v) => typeof v === "string" && v !== "", "a non-empty string"],
  string: [(v) => typeof v === "string", "a string"],
  boolean: [(v) => typeof v === "boolean", "a boolean"],
  function: [(v) => typeof v === "function", "a function"],
  readMode: [(v) => v === "status" || v === "every-tick", '"status" or "every-tick"'],
  signal: [(v) => typeof AbortSignal === "function" && v instanceof AbortSignal, "an AbortSignal"],
  object: [(v) => typeof v === "object" && v !== null, "an object"],
};

/** `value` (named `name`) checked as `kind`; `undefined` when not given, unless `required`. */
function checked(name, value, kind, required = false) {
  if (value === undefined && !required) return value;
  const [ok, expected, shape = (v) => v] = KINDS[kind];
  if (!ok(value)) throw invalid(name, expected, value);
  return shape(value);
}

/** Each `[name, kind]` of `fields` from `options`, checked in order, into `into`; a message names `prefix + name`. */
export function read(options, fields, into = {}, prefix = "") {
  for (const [name, kind] of fields) into[name] = checked(prefix + name, options[name], kind);
  return into;
}

/** An object the wasm reads fields of (`options`, a webhook payload). */
export const object = (name, value) => checked(name, value, "object", true);

/** A string (`classifyV4Status`'s status). */
export const string = (name, value) => checked(name, value, "string", true);

/** `retry` flattened: its three fields (the engine checks that the delays are in order). */
function retry(value) {
  if (value === undefined) return {};
  return read(object("retry", value), [["retries", "retries"], ["minDelayMs", "ms"], ["maxDelayMs", "ms"]], {}, "retry.");
}

/** Where requests go and how long each may take: every call's options start with these. */
export const ENDPOINT = [
  ["baseUrl", "text"],
  ["timeoutMs", "ms"],
];

/** `headers.set(name, value)` unless `value` is undefined; `refused()` when it is not a header value. */
function setHeader(headers, name, value, refused) {
  try {
    if (value !== undefined) headers.set(name, value);
  } catch {
    throw refused();
  }
}

/**
 * The headers of the last call that gave only credentials, kept for the next call with the same
 * ones: a cron Worker's `pollStep` passes the same key every tick, and building a `Headers` to
 * check them was a fifth of a status round's own CPU. Frozen: every caller shares the object.
 */
let credentialsOnly = null;

/** `headers`, `apiKey`, `projectId`, `fetch`, `signal`: how requests are sent. */
export function connection(options) {
  const extra = options.headers;
  const { apiKey, projectId } = options;
  const cached = extra === undefined && credentialsOnly !== null && credentialsOnly.key === apiKey && credentialsOnly.project === projectId;
  const headers = cached ? credentialsOnly.headers : checkedHeaders(extra, apiKey, projectId);
  if (extra === undefined && !cached) credentialsOnly = { key: apiKey, project: projectId, headers };
  return read(options, [["fetch", "function"], ["signal", "signal"]], { headers });
}

/** The user's `headers` with the credentials, checked, as a frozen plain object of lowercase names. */
function checkedHeaders(extra, apiKey, projectId) {
  const refused = () => invalid("headers", "an object of header names and values", extra);
  let headers;
  try {
    // `new Headers(init)` takes an object, an array of pairs or another `Headers`.
    headers = new Headers(checked("headers", extra, "object"));
  } catch {
    throw refused();
  }
  // Set after the user's headers: the documented credentials win over a stray copy.
  const key = checked("apiKey", apiKey, "text");
  // The key is never echoed: it is a secret.
  setHeader(headers, "Authorization", key && `x-api-key ${key}`, () => new TypeError("Expected `apiKey` to be a valid header value"));
  const project = checked("projectId", projectId, "text");
  setHeader(headers, "x-project-id", project, () => invalid("projectId", "a valid header value", project));
  return Object.freeze(Object.fromEntries(headers));
}

/** What `JobPoller` and `pollStep` share. */
export function common(options) {
  object("options", options);
  const out = { jobUid: checked("jobUid", options.jobUid, "text", true) };
  read(options, ENDPOINT, out);
  Object.assign(out, retry(options.retry));
  read(options, [["seed", "seed"], ["readMode", "readMode"], ["rowKey", "text"], ["cursor", "string"]], out);
  // Without a seed, every client draws its own, so jitter spreads clients started together.
  out.seed ??= Math.random() * Number.MAX_SAFE_INTEGER;
  return Object.assign(out, connection(options));
}

/** `JobPoller`'s options, checked: what `new` of the wasm's JobPoller reads. */
export const pollerOptions = (options) =>
  read(options, [["intervalMs", "ms"], ["statusEvery", "count"], ["hiddenIntervalMs", "hidden"], ["maxDurationMs", "duration"], ["maxRequests", "count"]], common(options));
