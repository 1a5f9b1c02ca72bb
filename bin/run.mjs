// `run <workflowUid> --inputs FILE`: schedules the workflow with the package's
// scheduleWorkflow, prints the job uid on stderr, then watches the run like `watch`.
// With `--state`, the job uid is saved before the first row: running the same command again
// continues that run instead of scheduling a second one.
import { readFile } from "node:fs/promises";
import { optionError } from "./connection.mjs";
import { CsvError, parseCsvObjects } from "./csv.mjs";
import { EXIT, exitCodeFor } from "./exit-codes.mjs";
import { failureText } from "./failure-text.mjs";
import { checkOutputFiles, fsReason } from "./file-checks.mjs";
import { loadPackage, settle } from "./package-entry.mjs";
import { plural } from "./progress.mjs";
import { failsAtOnce, observedFetch, refusedText } from "./requests.mjs";
import { resumeText } from "./resume-command.mjs";
import { readState } from "./state-file.mjs";
import { UsageError } from "./usage-error.mjs";
import { watch } from "./watch.mjs";

/** The file's text (`-`: stdin), without the byte order mark editors such as Excel write. */
async function readText(flag, file, reporter) {
  let text;
  try {
    if (file === "-" && process.stdin.isTTY) reporter.say(`--${flag} -: reading from the terminal; end with Ctrl-D`);
    text = file === "-" ? await new Response(process.stdin).text() : await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`--${flag} ${file}: cannot read it: ${fsReason(error)}`);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

const kindOf = (value) => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`);

/** JSON when the name says so or the text starts with `[`/`{`; CSV (with a header) otherwise. */
function looksLikeJson(file, text) {
  if (/\.json$/i.test(file)) return true;
  if (/\.csv$/i.test(file)) return false;
  return /^\s*[[{]/.test(text);
}

/**
 * The workflow's inputs from `--inputs FILE` (`-`: stdin): a JSON array of objects (or
 * `{ "inputs": [...] }`), or a CSV file whose header names the fields.
 */
export async function readInputs(file, reporter) {
  const text = await readText("inputs", file, reporter);
  const at = `--inputs ${file}`;
  if (text.trim() === "") throw new UsageError(`${at}: the file is empty; expected a JSON array of inputs or a CSV file with a header`);
  let inputs;
  if (looksLikeJson(file, text)) {
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`${at}: not valid JSON (${error.message})`);
    }
    inputs = Array.isArray(parsed) ? parsed : parsed?.inputs;
    if (!Array.isArray(inputs)) throw new UsageError(`${at}: expected a JSON array of inputs (or { "inputs": [...] }), got ${kindOf(parsed)}`);
    const bad = inputs.findIndex((input) => input === null || typeof input !== "object" || Array.isArray(input));
    if (bad !== -1) throw new UsageError(`${at}: input ${bad + 1} is ${kindOf(inputs[bad])}, not an object of fields`);
    if (inputs.length === 0) throw new UsageError(`${at}: the array is empty: no inputs to schedule`);
    return inputs;
  }
  try {
    inputs = parseCsvObjects(text);
  } catch (error) {
    if (error instanceof CsvError) throw new UsageError(`${at}: ${error.message}`);
    throw error;
  }
  if (inputs.length === 0) {
    const header = text.split(/\r?\n/, 1)[0];
    const semicolons = !header.includes(",") && header.includes(";") ? " (its header has semicolons: the separator must be a comma)" : "";
    throw new UsageError(`${at}: a header line and no rows: no inputs to schedule${semicolons}`);
  }
  return inputs;
}

/** `--steps FILE`: a JSON array of the workflow's steps (none when absent). */
async function readSteps(file, reporter) {
  if (file === undefined) return [];
  const text = await readText("steps", file, reporter);
  let steps;
  try {
    steps = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--steps ${file}: not valid JSON (${error.message})`);
  }
  if (!Array.isArray(steps)) throw new UsageError(`--steps ${file}: expected a JSON array of steps, got ${kindOf(steps)}`);
  return steps;
}

/** Resolves with the exit code. */
export async function run({ workflowUid, values, connection, access, reporter, interrupt }) {
  const ctx = { values, connection, access, reporter, interrupt, workflowUid };
  const saved = values.state === undefined ? null : await readState(values.state);
  if (saved) {
    if (saved.v4) throw new UsageError(`--state ${values.state} follows v4 run ${saved.jobUid} of action ${saved.workflowUid}: add --v4 (and CAPTAINDATA_ADMIN_TOKEN) to continue it, or use another --state file`);
    if (saved.workflowUid !== workflowUid) {
      throw new UsageError(`--state ${values.state} follows run ${saved.jobUid}${saved.workflowUid ? ` of workflow ${saved.workflowUid}` : ""}, not a run of ${workflowUid}: use another --state file`);
    }
    reporter.say(`run ${saved.jobUid} (scheduled earlier, from --state ${values.state}): continuing it; no new run is scheduled`);
    return watch({ ...ctx, jobUid: saved.jobUid });
  }
  // Everything that can be refused is refused before the run exists (a run costs credits).
  await checkOutputFiles(values, { continuing: values.cursor !== undefined });
  const inputs = await readInputs(values.inputs, reporter);
  const steps = await readSteps(values.steps, reporter);
  const body = { job_name: values["job-name"] ?? `captaindata-poller ${new Date().toISOString()}`, steps, inputs };
  const { scheduleWorkflow } = await loadPackage();
  // A first Ctrl-C now waits for the answer: the run may exist, and its uid must be printed.
  let scheduling = true;
  interrupt.on(() => scheduling && reporter.say("waiting for the schedule request's answer, to print the new run's job uid…"));
  let scheduled;
  const requests = observedFetch();
  try {
    scheduled = await settle(scheduleWorkflow({ ...connection, fetch: requests.fetch }, workflowUid, body));
  } catch (error) {
    throw error instanceof TypeError ? optionError(error) : error;
  } finally {
    scheduling = false;
  }
  if (scheduled.error) {
    if (scheduled.error instanceof TypeError) throw optionError(scheduled.error);
    const noAnswer = requests.seen.lastNoAnswer;
    if (noAnswer && failsAtOnce(noAnswer, { first: requests.seen.answered === 0 })) {
      reporter.say(`error: scheduling workflow ${workflowUid} failed: ${refusedText(noAnswer, values)}`);
      return EXIT.GAVE_UP;
    }
    reporter.say(`error: scheduling workflow ${workflowUid} failed: ${failureText(scheduled.error, { access, lastNoAnswer: noAnswer })}`);
    return exitCodeFor(scheduled.error);
  }
  const { jobUid } = scheduled.value;
  reporter.say(`scheduled run ${jobUid} of workflow ${workflowUid} (${plural(inputs.length, "input")})`);
  if (interrupt.requested) {
    // Ctrl-C while the schedule request was out: the run exists; say how to watch it.
    reporter.say(`interrupted before any row. ${resumeText({ jobUid, values, cursor: null, tokenFrom: ctx.access.tokenFrom }, { heading: "To watch the run:" })}`);
    return interrupt.exitCode;
  }
  return watch({ ...ctx, jobUid });
}
