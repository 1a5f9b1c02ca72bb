// `watch <jobUid>` (and the second half of `run`): the package's JobPoller delivers each new
// batch once, in order; each batch is written to the output, fsynced, and only then is the
// resume state replaced. Ctrl-C stops the poller, lets the batch being written finish, and
// prints the command that continues; so does giving up (a timeout, retries exhausted).
import path from "node:path";
import { optionError } from "./connection.mjs";
import { EXIT, exitCodeFor } from "./exit-codes.mjs";
import { failureText } from "./failure-text.mjs";
import { missingText } from "./missing-rows.mjs";
import { checkOutputFiles } from "./file-checks.mjs";
import { OutputError } from "./output.mjs";
import { loadPackage, settle } from "./package-entry.mjs";
import { plural } from "./progress.mjs";
import { failsAtOnce, observedFetch, refusedText } from "./requests.mjs";
import { resumeText } from "./resume-command.mjs";
import { checkState, openRows } from "./resume-output.mjs";
import { readState, writeState } from "./state-file.mjs";
import { UsageError } from "./usage-error.mjs";

/** "retrying (2/5) in 1.5 s: SERVER_ERROR, HTTP 503" for a RunStatus's `retrying`, or null. */
function retryLine(retrying) {
  if (!retrying) return null;
  const { attempt, retries, delayMs, error } = retrying;
  const status = error?.status === undefined ? "" : `, HTTP ${error.status}`;
  return `retrying (${attempt}/${retries}) in ${(delayMs / 1000).toFixed(1)} s: ${error?.code ?? "error"}${status}`;
}

const defined = (object) => Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));

/** The package's poller for this watch; its options are checked here, before any file is touched. */
function newPoller(JobPoller, { jobUid, cursor, values, connection, fetch, onBatch, onStatus }) {
  try {
    return new JobPoller(
      defined({
        ...connection,
        jobUid,
        cursor: cursor ?? undefined,
        intervalMs: values.intervalMs,
        maxDurationMs: values.timeoutMs,
        fetch,
        onBatch,
        onStatus,
        // A throwing onBatch is ours (the output failed): watch() handles it.
        onCallbackError() {},
        // The CLI reports the outcome itself, redacted and in its own words: the package's
        // console line for an unhandled failure must not print it raw.
        onError() {},
      }),
    );
  } catch (error) {
    throw error instanceof TypeError ? optionError(error) : error;
  }
}

/**
 * Watches `jobUid` to its end; resolves with the exit code.
 * @param {{ jobUid: string, workflowUid?: string, v4?: boolean, values: Record<string, any>,
 *   connection: object, access: import("./connection.mjs").Access,
 *   reporter: ReturnType<import("./progress.mjs").createReporter>,
 *   interrupt: { requested: boolean, on(fn: () => void): void } }} ctx
 *   `workflowUid`: the workflow (or, with `v4`, the v4 action) whose run `run` launched.
 */
export async function watch({ jobUid, workflowUid, v4 = false, values, connection, access, reporter, interrupt }) {
  const format = values.format ?? "ndjson";
  const out = values.out === undefined ? null : path.resolve(values.out);
  const state = values.state === undefined ? null : await readState(values.state);
  if (state) checkState(state, { jobUid, values, format, out });
  await checkOutputFiles(values, { continuing: state !== null || values.cursor !== undefined });
  const { JobPoller } = await loadPackage();

  let rows = state?.rows ?? 0;
  let cursor = state?.cursor ?? values.cursor ?? null;
  let runStatus = null;
  let output = null;
  let rowsFormat = null;
  const startedAt = Date.now();
  // Nothing ever answered and the connection was refused: nothing listens there; say so now.
  let refused = null;
  let saidRefused = false;
  let lastStatusLine = null;
  let lastRetry = null;
  const requests = observedFetch({
    onChange: () => showProgress(),
    onNoAnswer(reason, { first }) {
      if (failsAtOnce(reason, { first })) {
        refused = reason;
        poller.stop();
      } else if (reason.code === "ECONNREFUSED" && !saidRefused) {
        saidRefused = true; // once: the progress line counts the retries
        reporter.note(`${reason.text}: retrying`);
      }
    },
  });
  const counts = requests.seen;
  const showProgress = () => reporter.progress({ rows, status: runStatus, requests: counts.requests, retries: counts.retries, startedAt });
  const csvRaw = format === "csv" ? { csvRaw: Boolean(values["csv-raw"]) } : {};
  const saveState = (done = false) =>
    values.state === undefined
      ? Promise.resolve()
      : writeState(values.state, { jobUid, ...(workflowUid ? { workflowUid } : {}), ...(v4 ? { v4: true } : {}), cursor, rows, format, out, outBytes: output.bytes, columns: rowsFormat.columns, ...csvRaw, done }).catch((error) => {
          throw new OutputError(`--state ${values.state}`, error);
        });

  let writeError = null;
  let writing = Promise.resolve();
  const fail = (error) => {
    writeError = error;
    poller.stop();
    throw error;
  };
  async function deliver(batch) {
    if (writeError) throw writeError;
    // Rows printed on the terminal itself: the progress line makes way, then comes back.
    if (values.out === undefined && process.stdout.isTTY) reporter.clear();
    await output.write(rowsFormat.rows(batch.results)).then(() => output.sync()).catch(fail);
    rows += batch.results.length;
    cursor = batch.cursor;
    // After the rows are on disk: the state is never ahead of them.
    await saveState().catch(fail);
    reporter.log(`rows: ${rows.toLocaleString("en")} (+${batch.results.length.toLocaleString("en")})`);
    showProgress();
  }
  const poller = newPoller(JobPoller, {
    jobUid,
    cursor,
    values,
    connection,
    fetch: requests.fetch,
    onBatch(batch) {
      writing = deliver(batch);
      return writing;
    },
    onStatus(run) {
      // Called also when a retry is scheduled or over (`run.retrying`): a line for what changed only.
      const retry = retryLine(run.retrying);
      if (retry !== null && retry !== lastRetry) reporter.log(retry);
      lastRetry = retry;
      if (run.status === "unknown") return showProgress(); // not read yet
      runStatus = run.status;
      const count = run.rowCount === null || run.rowCount === undefined ? "" : ` (row_count ${run.rowCount.toLocaleString("en")})`;
      const line = `status: ${run.status}${count}`;
      if (line !== lastStatusLine) reporter.log(line);
      lastStatusLine = line;
      return showProgress();
    },
  });
  // From now on a stop (Ctrl-C, SIGTERM, SIGHUP, a closed pipe) ends the poll, not the process.
  interrupt.on(() => poller.stop());

  ({ output, format: rowsFormat } = await openRows({ values, state, format, reporter }));
  if (output.bytes === 0) await output.write(rowsFormat.start());
  await saveState().catch(async (error) => {
    await output.close();
    throw new UsageError(error.message);
  });
  reporter.log(`watching run ${jobUid}${cursor ? " from its saved cursor" : ""}`);
  showProgress();
  const outcome = await settle(poller.start());
  await writing.catch(() => {});
  reporter.end();

  await output.write(rowsFormat.end()).catch(() => {}); // a JSON array is closed even when interrupted
  await output.sync().catch(() => {});
  await output.close();

  return reportOutcome({ outcome, writeError, refused, rows, cursor, counts, jobUid, values, access, reporter, interrupt, saveState });
}

/** Errors after which the same watch, later, may well succeed: the resume command is printed. */
const GAVE_UP = new Set(["TIMEOUT", "RETRIES_EXHAUSTED", "BUDGET_EXHAUSTED"]);

/** Says how the watch ended, on stderr, and gives the exit code. */
async function reportOutcome({ outcome, writeError, refused, rows, cursor, counts, jobUid, values, access, reporter, interrupt, saveState }) {
  const where = values.out === undefined ? "" : ` to ${values.out}`;
  // `| head` closed the pipe: the reader has what it wanted; say nothing more.
  if (writeError?.code === "EPIPE" || (interrupt.reason === "EPIPE" && !writeError)) return EXIT.PIPE_CLOSED;
  if (writeError) {
    reporter.say(`error: ${writeError.message}; ${plural(rows, "row")} written${where}`);
    return EXIT.RUN_FAILED;
  }
  const resume = () => resumeText({ jobUid, values, cursor, tokenFrom: access.tokenFrom });
  if (refused && !interrupt.requested) {
    reporter.say(`error: ${refusedText(refused, values)}; ${plural(rows, "row")} written${where}. ${resume()}`);
    return EXIT.GAVE_UP;
  }
  const summary = outcome.value;
  // A package older than the quiet stop() rejects ABORTED after stop() instead of resolving "stopped".
  const stopped = summary?.status === "stopped" || (interrupt.requested && outcome.error?.code === "ABORTED");
  if (stopped) {
    const how = interrupt.reason === "SIGINT" ? "interrupted" : `stopped by ${interrupt.spoken}`;
    reporter.say(`${how}: ${plural(rows, "row")} written${where}. ${resume()}`);
    return interrupt.exitCode;
  }
  if (outcome.error) {
    const error = outcome.error;
    if (error instanceof TypeError) throw optionError(error);
    const text = failureText(error, { access, lastNoAnswer: counts.lastNoAnswer });
    reporter.say(`error: ${text}; ${plural(rows, "row")} written${where}${GAVE_UP.has(error.code) ? `. ${resume()}` : ""}`);
    return exitCodeFor(error);
  }
  await saveState(true);
  // Rows known missing: every row stored was written, but the run is not whole. Never "done".
  if (summary.status === "incomplete") {
    reporter.say(missingText(summary.missing ?? {}, { rows, where }));
    return EXIT.ROWS_MISSING;
  }
  const requests = summary.requests ?? counts.requests;
  const retries = summary.retries ?? counts.retries;
  reporter.note(`done: run ${summary.status}, ${plural(rows, "row")}${where}, ${plural(requests, "request")}, ${plural(retries, "retry", "retries")}, ${(summary.durationMs / 1000).toFixed(1)} s`);
  if (String(summary.status).toLowerCase() === "warning") {
    reporter.say("note: the run ended with status warning: some inputs failed; they can be retried in Captain Data");
  }
  return EXIT.OK;
}
