// `run <workflowUid> --inputs FILE`: schedules the workflow with the package's
// scheduleWorkflow, prints the job uid on stderr, then watches the run like `watch`.
// With `--state`, the job uid is saved before the first row: running the same command again
// continues that run instead of scheduling a second one.
import { readFile } from "node:fs/promises";
import { optionError } from "./connection.mjs";
import { CsvError, parseCsvObjects } from "./csv.mjs";
import { EXIT, exitCodeFor } from "./exit-codes.mjs";
import { loadPackage, settle } from "./package-entry.mjs";
import { plural } from "./progress.mjs";
import { resumeCommand } from "./resume-command.mjs";
import { readState } from "./state-file.mjs";
import { UsageError } from "./usage-error.mjs";
import { watch } from "./watch.mjs";

async function readText(flag, file) {
  try {
    return file === "-" ? await new Response(process.stdin).text() : await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`--${flag} ${file}: cannot read it (${error.code ?? error.message})`);
  }
}

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
export async function readInputs(file) {
  const text = await readText("inputs", file);
  let inputs;
  if (looksLikeJson(file, text)) {
    try {
      const parsed = JSON.parse(text);
      inputs = Array.isArray(parsed) ? parsed : parsed?.inputs;
    } catch (error) {
      throw new UsageError(`--inputs ${file}: not valid JSON (${error.message})`);
    }
    if (!Array.isArray(inputs)) throw new UsageError(`--inputs ${file}: expected a JSON array of inputs (or { "inputs": [...] })`);
    const bad = inputs.findIndex((input) => input === null || typeof input !== "object" || Array.isArray(input));
    if (bad !== -1) throw new UsageError(`--inputs ${file}: input ${bad + 1} is not an object`);
  } else {
    try {
      inputs = parseCsvObjects(text);
    } catch (error) {
      if (error instanceof CsvError) throw new UsageError(`--inputs ${file}: ${error.message}`);
      throw error;
    }
  }
  if (inputs.length === 0) throw new UsageError(`--inputs ${file}: no inputs in it`);
  return inputs;
}

/** `--steps FILE`: a JSON array of the workflow's steps (none when absent). */
async function readSteps(file) {
  if (file === undefined) return [];
  const text = await readText("steps", file);
  let steps;
  try {
    steps = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--steps ${file}: not valid JSON (${error.message})`);
  }
  if (!Array.isArray(steps)) throw new UsageError(`--steps ${file}: expected a JSON array of steps`);
  return steps;
}

/** Resolves with the exit code. */
export async function run({ workflowUid, values, connection, reporter, interrupt }) {
  const ctx = { values, connection, reporter, interrupt, workflowUid };
  const saved = values.state === undefined ? null : await readState(values.state);
  if (saved) {
    if (saved.workflowUid !== workflowUid) {
      throw new UsageError(`--state ${values.state} follows run ${saved.jobUid}${saved.workflowUid ? ` of workflow ${saved.workflowUid}` : ""}, not a run of ${workflowUid}: use another --state file`);
    }
    reporter.say(`run ${saved.jobUid} (scheduled earlier, from --state ${values.state}): continuing it; no new run is scheduled`);
    return watch({ ...ctx, jobUid: saved.jobUid });
  }
  const inputs = await readInputs(values.inputs);
  const steps = await readSteps(values.steps);
  const body = { job_name: values["job-name"] ?? `captaindata-poller ${new Date().toISOString()}`, steps, inputs };
  const { scheduleWorkflow } = await loadPackage();
  // A first Ctrl-C now waits for the answer: the run may exist, and its uid must be printed.
  let scheduling = true;
  interrupt.on(() => scheduling && reporter.say("waiting for the schedule request's answer, to print the new run's job uid…"));
  let scheduled;
  try {
    scheduled = await settle(scheduleWorkflow(connection, workflowUid, body));
  } catch (error) {
    throw error instanceof TypeError ? optionError(error) : error;
  } finally {
    scheduling = false;
  }
  if (scheduled.error) {
    if (scheduled.error instanceof TypeError) throw optionError(scheduled.error);
    const { code, message } = scheduled.error;
    reporter.say(`error: scheduling workflow ${workflowUid} failed: ${code ? `${code}: ` : ""}${message}`);
    return exitCodeFor(scheduled.error);
  }
  const { jobUid } = scheduled.value;
  reporter.say(`scheduled run ${jobUid} of workflow ${workflowUid} (${plural(inputs.length, "input")})`);
  if (interrupt.requested) {
    // Ctrl-C while the schedule request was out: the run exists; say how to watch it.
    reporter.say(`interrupted before any row. To watch the run:\n  ${resumeCommand({ jobUid, values, cursor: null })}`);
    return EXIT.INTERRUPTED;
  }
  return watch({ ...ctx, jobUid });
}
