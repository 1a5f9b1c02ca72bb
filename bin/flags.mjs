// The command line's grammar: each command's flags (node:util parseArgs), their checks, and
// the usage errors that name the flag at fault.
import { parseArgs } from "node:util";
import { didYouMean } from "./did-you-mean.mjs";
import { FORMATS } from "./row-format.mjs";
import { UsageError } from "./usage-error.mjs";

const CONNECTION = {
  "base-url": { type: "string" },
  "api-key-file": { type: "string" },
  "project-id": { type: "string" },
  header: { type: "string", multiple: true },
  "header-env": { type: "string", multiple: true },
  "read-token": { type: "string" },
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
  force: { type: "boolean" },
  "csv-raw": { type: "boolean" },
};

/** Each command: its flags and the name of its one positional argument. */
export const COMMANDS = Object.freeze({
  watch: { flags: WATCH, positional: "jobUid" },
  run: { flags: { ...WATCH, inputs: { type: "string" }, "job-name": { type: "string" }, steps: { type: "string" }, v4: { type: "boolean" } }, positional: "workflowUid" },
  status: { flags: { ...CONNECTION, json: { type: "boolean" }, "exit-status": { type: "boolean" } }, positional: "jobUid" },
});

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "10s", "500ms", "1.5m", "2h" → milliseconds; anything else is a usage error naming `flag`. */
export function parseDuration(flag, text) {
  const found = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  const ms = found ? Math.round(Number(found[1]) * UNITS[found[2]]) : NaN;
  if (ms === 0) throw new UsageError(`--${flag}: the duration must be above zero (got ${JSON.stringify(text)}), e.g. 10s`);
  if (!(ms > 0)) {
    const hint = /^\d+(\.\d+)?$/.test(text.trim()) ? ": add a unit" : "";
    throw new UsageError(`--${flag}: expected a duration such as 10s, 500ms or 2m (got ${JSON.stringify(text)})${hint}`);
  }
  return ms;
}

/** parseArgs' failures in our words, with a "did you mean" for a mistyped flag. */
function parseFailure(command, error) {
  const flag = /'(?:-\w, )?(-[^' ]*)/.exec(error.message)?.[1] ?? "";
  const usage = (text) => new UsageError(`${command}: ${text}`, { usage: command });
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const known = Object.keys(COMMANDS[command].flags).map((name) => `--${name}`);
    return usage(`unknown flag ${flag}${didYouMean(flag.split("=")[0], known)}`);
  }
  if (/argument missing/.test(error.message)) return usage(`${flag} needs a value`);
  if (/ambiguous/.test(error.message)) return usage(`${flag} needs a value, and the next word is a flag (write ${flag}=VALUE for a value that starts with -)`);
  if (/does not take an argument/.test(error.message)) return usage(`${flag} takes no value`);
  return usage(error.message.replace(/\. To specify a positional argument.*$/s, ""));
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
  if (positionals.length === 0) throw new UsageError(`${command}: missing <${positional}>`, { usage: command });
  if (positionals.length > 1) {
    throw new UsageError(`${command}: one <${positional}> expected, got also ${JSON.stringify(positionals.slice(1).join(" "))}`, { usage: command });
  }
  if (values.out === "-") delete values.out; // `--out -`: stdout, as without --out
  if (values.format !== undefined && !FORMATS.includes(values.format)) {
    throw new UsageError(`--format: expected ${FORMATS.join(", ")} (got ${JSON.stringify(values.format)})${didYouMean(values.format, FORMATS)}`);
  }
  if (command === "run" && values.inputs === undefined) {
    throw new UsageError(`run${values.v4 ? " --v4" : ""}: --inputs FILE is required (a JSON array of inputs, or a CSV file with a header)`);
  }
  for (const flag of ["interval", "timeout"]) {
    if (values[flag] !== undefined) values[`${flag}Ms`] = parseDuration(flag, values[flag]);
  }
  return { values, target: positionals[0] };
}
