// The command line's grammar: each command's flags (node:util parseArgs), their checks, and
// the usage errors that name the flag at fault.
import { parseArgs } from "node:util";
import { FORMATS } from "./row-format.mjs";
import { UsageError } from "./usage-error.mjs";

const CONNECTION = {
  "base-url": { type: "string" },
  "api-key-file": { type: "string" },
  "project-id": { type: "string" },
  help: { type: "boolean", short: "h" },
};
const WATCH = {
  ...CONNECTION,
  format: { type: "string" },
  out: { type: "string" },
  state: { type: "string" },
  cursor: { type: "string" },
  interval: { type: "string" },
  timeout: { type: "string" },
  quiet: { type: "boolean", short: "q" },
};

/** Each command: its flags and the name of its one positional argument. */
export const COMMANDS = Object.freeze({
  watch: { flags: WATCH, positional: "jobUid" },
  run: { flags: { ...WATCH, inputs: { type: "string" }, "job-name": { type: "string" }, steps: { type: "string" } }, positional: "workflowUid" },
  status: { flags: { ...CONNECTION, json: { type: "boolean" } }, positional: "jobUid" },
});

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "10s", "500ms", "1.5m", "2h" → milliseconds; anything else is a usage error naming `flag`. */
export function parseDuration(flag, text) {
  const found = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  const ms = found ? Math.round(Number(found[1]) * UNITS[found[2]]) : NaN;
  if (!(ms > 0)) {
    const hint = /^\d+(\.\d+)?$/.test(text.trim()) ? ": add a unit" : "";
    throw new UsageError(`--${flag}: expected a duration such as 10s, 500ms or 2m (got ${JSON.stringify(text)})${hint}`);
  }
  return ms;
}

/** parseArgs' own messages ("Unknown option '--x'") with the command they were given to. */
function parseFailure(command, error) {
  const text = error.message.replace(/\. To specify a positional argument.*$/s, "");
  return new UsageError(`${command}: ${text} (see captaindata-poller ${command} --help)`);
}

/**
 * `argv` after the command name → `{ values, target }` (`target`: the positional), or
 * `{ help: true }`. Throws a UsageError naming the flag or argument at fault.
 */
export function parseCommand(command, argv) {
  const { flags, positional } = COMMANDS[command];
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: flags, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseFailure(command, error);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length === 0) throw new UsageError(`${command}: missing <${positional}> (see captaindata-poller ${command} --help)`);
  if (positionals.length > 1) {
    throw new UsageError(`${command}: one <${positional}> expected, got also ${JSON.stringify(positionals.slice(1).join(" "))}`);
  }
  if (values.format !== undefined && !FORMATS.includes(values.format)) {
    throw new UsageError(`--format: expected ${FORMATS.join(", ")} (got ${JSON.stringify(values.format)})`);
  }
  if (command === "run" && values.inputs === undefined) {
    throw new UsageError("run: --inputs FILE is required (a JSON array of inputs, or a CSV file with a header)");
  }
  for (const flag of ["interval", "timeout"]) {
    if (values[flag] !== undefined) values[`${flag}Ms`] = parseDuration(flag, values[flag]);
  }
  return { values, target: positionals[0] };
}
