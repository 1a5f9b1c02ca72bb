// The exact command that continues an interrupted watch, printed on Ctrl-C and when the
// poller gives up. It repeats the flags that shape the output and the connection, never a
// secret (the key stays in the environment or its file; a read token or a header value given
// as a flag is named, not printed), and resumes from `--state`, or from `--cursor` when there
// is no state file.
import path from "node:path";
import { LAUNCH_TOKEN } from "./v4-launch.mjs";

/**
 * How this process was started, so that the printed command runs the same way: `npx
 * captaindata-poller`, `captaindata-poller` (a bin on PATH), the bin's path, or `node <script>`.
 */
export function invocation(env = process.env, script = process.argv[1] ?? "captaindata-poller") {
  if (env.npm_command === "exec") return ["npx", "captaindata-poller"];
  const relative = path.relative(process.cwd(), script) || script;
  if (path.basename(script) !== "captaindata-poller") return ["node", relative];
  const onPath = (env.PATH ?? "").split(path.delimiter).some((dir) => dir && path.resolve(dir) === path.dirname(script));
  return [onPath ? "captaindata-poller" : relative.includes(path.sep) ? relative : `.${path.sep}${relative}`];
}

// Written so that plain tools read them right: the slash in the character class is escaped (a
// tokenizer that ends a regex at the first slash saw a second regex open after it), and the
// quoting is plain strings, not template literals nested in a template (read as unclosed strings).
const PLAIN_WORD = /^[\w@%+=:,.\/-]+$/;
const QUOTE = "'";
const QUOTED_QUOTE = "'\\''"; // close the quote, a backslashed quote, reopen

/** POSIX shell quoting: plain words stay as they are. */
export function shellQuote(word) {
  return PLAIN_WORD.test(word) ? word : QUOTE + word.replaceAll(QUOTE, QUOTED_QUOTE) + QUOTE;
}

const CARRIED = ["format", "out", "state", "base-url", "api-key-file", "project-id", "interval", "timeout"];
const CARRIED_SWITCHES = ["csv-raw"];

/**
 * @param {{ jobUid: string, values: Record<string, any>, cursor: string | null, tokenFrom?: string | null }} watch
 *   `values`: the flags as given; `cursor`: where the rows written so far end; `tokenFrom`:
 *   where the read token came from (the connection's `access.tokenFrom`).
 */
export function resumeCommand({ jobUid, values, cursor }, prefix = invocation()) {
  const words = [...prefix, "watch", jobUid];
  for (const flag of CARRIED) if (values[flag] !== undefined) words.push(`--${flag}`, values[flag]);
  // A header from a file or a variable names where its value is, not the value: carried.
  for (const header of values.header ?? []) if (header.startsWith("@")) words.push("--header", header);
  for (const header of values["header-env"] ?? []) words.push("--header-env", header);
  for (const flag of CARRIED_SWITCHES) if (values[flag]) words.push(`--${flag}`);
  if (values.state === undefined && cursor) words.push("--cursor", cursor);
  if (values.quiet) words.push("--quiet");
  return words.map(shellQuote).join(" ");
}

/**
 * What the command leaves out because it holds secrets, and how to give it again; "" when
 * nothing. `tokenFrom`: where this command's read token came from (a variable set for one
 * command, `CAPTAINDATA_READ_TOKEN=… npx …`, is gone for the next).
 */
export function leftOutNote(values, tokenFrom = null, jobUid = "<uid>") {
  const missing = [];
  if (values["read-token"] !== undefined) missing.push("the read token: set CAPTAINDATA_READ_TOKEN, or add --read-token TOKEN");
  else if (tokenFrom === "CAPTAINDATA_READ_TOKEN") missing.push("the read token: CAPTAINDATA_READ_TOKEN must be set for it too");
  else if (tokenFrom === LAUNCH_TOKEN) {
    // The launch's token was never printed: the worker's /track gives another to its admin.
    const again = values.state === undefined ? "" : ", or run the same run --v4 command again (CAPTAINDATA_ADMIN_TOKEN set): it continues from --state";
    missing.push(`the read token: the launch's is not printed; POST /v3/jobs/${jobUid}/track to the worker with its admin token gives one: set it as CAPTAINDATA_READ_TOKEN${again}`);
  }
  for (const header of values.header ?? []) {
    if (header.startsWith("@")) continue;
    const name = header.slice(0, Math.max(0, header.indexOf(":"))).trim();
    missing.push(`add --header "${name}: …" with its value`);
  }
  return missing.length === 0 ? "" : `(secrets are not printed; give them again: ${missing.join("; ")})`;
}

/** "To resume:", the command, and the note on what it leaves out: the lines printed after a stop. */
export function resumeText(watch, { heading = "To resume:", prefix = invocation() } = {}) {
  const note = leftOutNote(watch.values, watch.tokenFrom, watch.jobUid);
  return `${heading}\n  ${resumeCommand(watch, prefix)}${note ? `\n  ${note}` : ""}`;
}
