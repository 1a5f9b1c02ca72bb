// `run <action> --v4 --inputs FILE --base-url <worker origin>`: launches a Captain Data v4 run
// through the project's worker (bin/v4-launch.mjs), prints its run uid on stderr, then watches
// it like `watch` through the worker's /v3 with the launch's read token. With `--state`, the run
// uid is saved before the first row: the same command again continues that run (a new read
// token asked of the worker's /track with the admin token) instead of launching another one.
import { EXIT } from "./exit-codes.mjs";
import { checkOutputFiles } from "./file-checks.mjs";
import { plural } from "./progress.mjs";
import { resumeText } from "./resume-command.mjs";
import { readInputs } from "./run.mjs";
import { readState } from "./state-file.mjs";
import { UsageError } from "./usage-error.mjs";
import { launchV4Run, trackedReadToken, withReadToken } from "./v4-launch.mjs";
import { watch } from "./watch.mjs";

/** A run followed in `--state` before: continued with a new read token, nothing launched. */
async function continueSaved({ saved, action, ctx, v4 }) {
  if (!saved.v4 || saved.workflowUid !== action) {
    const what = saved.v4 ? `v4 run ${saved.jobUid} of action ${saved.workflowUid}` : `run ${saved.jobUid}${saved.workflowUid ? ` of workflow ${saved.workflowUid}` : ""} (v3)`;
    throw new UsageError(`--state ${ctx.values.state} follows ${what}, not a v4 run of ${action}: use another --state file`);
  }
  ctx.reporter.say(`v4 run ${saved.jobUid} (launched earlier, from --state ${ctx.values.state}): continuing it; no new run is launched`);
  const tracked = await trackedReadToken({ origin: v4.origin, admin: v4.admin, runUid: saved.jobUid });
  if (tracked.failed) {
    ctx.reporter.say(`error: continuing v4 run ${saved.jobUid} failed: ${tracked.failed.text}`);
    return tracked.failed.code;
  }
  return watch({ ...ctx, ...withReadToken(ctx, tracked.readToken), jobUid: saved.jobUid });
}

/**
 * Resolves with the exit code.
 * @param {{ action: string, values: Record<string, any>, connection: object,
 *   access: import("./connection.mjs").Access, v4: { origin: string, admin: string },
 *   reporter: ReturnType<import("./progress.mjs").createReporter>,
 *   interrupt: { requested: boolean, on(fn: () => void): void, exitCode: number } }} options
 */
export async function runV4({ action, values, connection, access, v4, reporter, interrupt }) {
  // The resume command and the state name the worker's /v3, where the run is read.
  const ctx = { values: { ...values, "base-url": `${v4.origin}/v3` }, connection, access, reporter, interrupt, workflowUid: action, v4: true };
  const saved = values.state === undefined ? null : await readState(values.state);
  if (saved) return continueSaved({ saved, action, ctx, v4 });
  // Everything that can be refused is refused before the run exists (a run costs credits).
  await checkOutputFiles(values, { continuing: values.cursor !== undefined });
  const inputs = await readInputs(values.inputs, reporter);
  // A first Ctrl-C now waits for the answer: the run may exist, and its uid must be printed.
  let launching = true;
  interrupt.on(() => launching && reporter.say("waiting for the launch request's answer, to print the new run's uid…"));
  let launched;
  try {
    launched = await launchV4Run({ origin: v4.origin, admin: v4.admin, action, inputs, inputsFile: values.inputs });
  } finally {
    launching = false;
  }
  if (launched.failed) {
    reporter.say(`error: launching v4 action ${action} through --base-url ${v4.origin} failed: ${launched.failed.text}`);
    return launched.failed.code;
  }
  const { runUid } = launched;
  reporter.say(`launched v4 run ${runUid} of action ${action} (${plural(inputs.length, "input")}) through the worker at ${v4.origin}`);
  const reading = { ...ctx, ...withReadToken(ctx, launched.readToken) };
  if (interrupt.requested) {
    reporter.say(`interrupted before any row. ${resumeText({ jobUid: runUid, values: reading.values, cursor: null, tokenFrom: access.tokenFrom }, { heading: "To watch the run:" })}`);
    return interrupt.exitCode ?? EXIT.INTERRUPTED;
  }
  return watch({ ...reading, jobUid: runUid });
}
