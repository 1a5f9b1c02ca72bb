// The v4 run's shape and callback faults as settings: command-line flags of sim/server.mjs
// (`--v4-rows 100 --v4-lost 0.2 --v4-replays-lost`) and environment settings of worker/dev.mjs
// (`V4_ROWS=100 V4_LOST=0.2 V4_REPLAYS_LOST=1`), both read here into one v4 run spec
// (sim/v4-runs.js `V4RunSpec`), the spec of every run launched by `POST /v4/actions/{name}/async`.

/** A bad value: its message names the flag or the variable. */
export class V4SettingError extends Error {}

/**
 * @typedef {{ flag: string, env: string, kind: "whole" | "positive" | "share" | "flag" | "outcome",
 *   set: (spec: object, value: any) => void, help: string }} Setting
 */

const fault = (name) => (spec, value) => void (spec.faults[name] = value);
const field = (name) => (spec, value) => void (spec[name] = value);

/**
 * Every setting, in the order `--help` lists them. `--v4-rows` is per input: Captain Data runs
 * an action input by input and each input yields its own results, so a launch of 3 inputs gets
 * 3 × N rows, each callback a page of one input's rows (with that input in its `input`).
 * @type {Setting[]}
 */
export const V4_SETTINGS = [
  { flag: "v4-rows", env: "V4_ROWS", kind: "whole", set: field("rowsPerInput"), help: "rows each input of a launch yields (default 100; 3 inputs: 300)" },
  { flag: "v4-rows-per-callback", env: "V4_ROWS_PER_CALLBACK", kind: "positive", set: field("pageSize"), help: "rows per RUNNING callback, a page of one input (default 10)" },
  { flag: "v4-duration", env: "V4_DURATION_MS", kind: "whole", set: field("durationMs"), help: "ms from RUNNING to the final callback, the pages evenly spread over it (default 10000)" },
  { flag: "v4-start-delay", env: "V4_START_DELAY_MS", kind: "whole", set: field("startDelayMs"), help: "ms QUEUED before it runs (default 0)" },
  { flag: "v4-outcome", env: "V4_OUTCOME", kind: "outcome", set: field("outcome"), help: "SUCCEEDED (default), PARTIAL_SUCCEEDED, FAILED, INVALID or STOPPED" },
  { flag: "v4-lost", env: "V4_LOST", kind: "share", set: fault("lostRate"), help: "share of callbacks never sent, recorded FAILED (0 to 1; default 0)" },
  { flag: "v4-duplicated", env: "V4_DUPLICATED", kind: "share", set: fault("duplicateRate"), help: "share of callbacks sent twice" },
  { flag: "v4-delayed", env: "V4_DELAYED", kind: "share", set: fault("delayRate"), help: "share of callbacks sent late (by the delay below)" },
  { flag: "v4-delay", env: "V4_DELAY_MS", kind: "whole", set: fault("delayMs"), help: "how late a delayed callback is, in ms (default 1000)" },
  { flag: "v4-reordered", env: "V4_REORDERED", kind: "share", set: fault("reorderRate"), help: "share of callbacks sent just after the next one" },
  { flag: "v4-unacknowledged", env: "V4_UNACKNOWLEDGED", kind: "share", set: fault("unacknowledgedRate"), help: "share received but recorded FAILED (a replay sends it again)" },
  { flag: "v4-final-lost", env: "V4_FINAL_LOST", kind: "flag", set: fault("finalLost"), help: "the final callback is lost (the run's status still ends it)" },
  { flag: "v4-replays-lost", env: "V4_REPLAYS_LOST", kind: "share", set: fault("replayLostRate"), help: "replays lost too: 1 (or the flag alone) every one, or a share" },
];

/** The command line's defaults (the JS option `v4Defaults` keeps sim/v4-runs.js's own). */
export const V4_SETTING_DEFAULTS = Object.freeze({ rowsPerInput: 100, pageSize: 10, durationMs: 10000 });

const OUTCOMES = ["SUCCEEDED", "PARTIAL_SUCCEEDED", "FAILED", "INVALID", "STOPPED"];
// Flags that may stand alone: bare means "every one" (1), as `--v4-replays-lost`.
const BARE_MEANS_ONE = new Set(["v4-replays-lost"]);

/** `parseArgs` options for the v4 flags (sim/server.mjs merges them into its own). */
export const V4_FLAG_OPTIONS = Object.freeze(
  Object.fromEntries(V4_SETTINGS.map((s) => [s.flag, { type: s.kind === "flag" ? "boolean" : "string" }])),
);

/** `--v4-replays-lost` alone (last, or before another flag) → `--v4-replays-lost=1`. */
export function withBareValues(argv) {
  return argv.map((arg, i) => {
    const next = argv[i + 1];
    const bare = arg.startsWith("--") && BARE_MEANS_ONE.has(arg.slice(2));
    return bare && (next === undefined || next.startsWith("-")) ? `${arg}=1` : arg;
  });
}

/** One value (text) of a setting named `name` (`--flag` or `VAR`) → its value, or a V4SettingError. */
function valueOf(setting, name, text) {
  const got = `(got ${JSON.stringify(text)})`;
  const t = String(text).trim();
  if (setting.kind === "flag") {
    if (typeof text === "boolean") return text;
    if (/^(1|true|yes)$/i.test(t)) return true;
    if (/^(0|false|no)$/i.test(t)) return false;
    throw new V4SettingError(`${name}: expected 1 or 0 ${got}`);
  }
  if (setting.kind === "outcome") {
    if (OUTCOMES.includes(t)) return t;
    throw new V4SettingError(`${name}: expected one of ${OUTCOMES.join(", ")} ${got}`);
  }
  if (setting.kind === "share") {
    if (/^true$/i.test(t)) return 1;
    if (/^false$/i.test(t)) return 0;
    const n = Number(t);
    if (t !== "" && Number.isFinite(n) && n >= 0 && n <= 1) return n;
    throw new V4SettingError(`${name}: expected a share from 0 to 1, e.g. 0.2 ${got}`);
  }
  const n = Number(t);
  const min = setting.kind === "positive" ? 1 : 0;
  if (/^\d+$/.test(t) && Number.isSafeInteger(n) && n >= min) return n;
  throw new V4SettingError(`${name}: expected a whole number ≥ ${min} ${got}`);
}

/** The spec from `read(setting)` (the text given, or undefined), over the command line's defaults. */
function specFrom(read, nameOf) {
  const spec = { ...V4_SETTING_DEFAULTS, faults: {} };
  for (const setting of V4_SETTINGS) {
    const text = read(setting);
    if (text === undefined || text === "") continue;
    setting.set(spec, valueOf(setting, nameOf(setting), text));
  }
  return spec;
}

/** The v4 run spec of parsed flags (`parseArgs` values with V4_FLAG_OPTIONS). */
export function v4SpecFromFlags(values) {
  return specFrom(
    (s) => values[s.flag],
    (s) => `--${s.flag}`,
  );
}

/** The v4 run spec of environment settings (`V4_ROWS`, `V4_LOST`, …). */
export function v4SpecFromEnv(env) {
  return specFrom(
    (s) => env[s.env],
    (s) => s.env,
  );
}

const ARGS = { share: "SHARE", outcome: "STATUS", positive: "N" };
const ENV_ARGS = { flag: "1" };
/** What a setting's value is called in `--help`: MS for times, [SHARE] for one that may stand alone. */
const argOf = (s, as) => (BARE_MEANS_ONE.has(s.flag) && as !== "env" ? "[SHARE]" : s.env.endsWith("_MS") ? "MS" : (ARGS[s.kind] ?? "N"));

/** The `--help` lines of the flags (`as: "flag"`) or the environment settings (`as: "env"`). */
export function v4SettingsHelp(as, indent = "  ") {
  const label = (s) => (as === "env" ? `${s.env}=${ENV_ARGS[s.kind] ?? argOf(s, as)}` : `--${s.flag}${s.kind === "flag" ? "" : ` ${argOf(s)}`}`);
  const width = Math.max(...V4_SETTINGS.map((s) => label(s).length)) + 2;
  return V4_SETTINGS.map((s) => `${indent}${label(s).padEnd(width)}${s.help}`).join("\n");
}

/** One line saying what a launched run will be: "100 rows per input, 10 per callback, over 10 s; faults: lostRate 0.2". */
export function describeV4Spec(spec) {
  const rows = spec.rowsPerInput !== undefined ? `${spec.rowsPerInput} rows per input` : `${spec.rows} rows`;
  const faults = Object.entries(spec.faults ?? {}).map(([name, v]) => `${name} ${v}`);
  const outcome = spec.outcome && spec.outcome !== "SUCCEEDED" ? `, ends ${spec.outcome}` : "";
  return `${rows}, ${spec.pageSize} per callback, over ${spec.durationMs / 1000} s${outcome}; faults: ${faults.length ? faults.join(", ") : "none"}`;
}
