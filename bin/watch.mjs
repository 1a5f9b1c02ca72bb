// `watch <jobUid>` (and the second half of `run`): the package's JobPoller delivers each new
// batch once, in order; each batch is written to the output, fsynced, and only then is the
// resume state replaced. Ctrl-C stops the poller, lets the batch being written finish, and
// prints the command that continues.
import path from "node:path";
import { optionError } from "./connection.mjs";
import { parseCsvRecords } from "./csv.mjs";
import { EXIT, exitCodeFor } from "./exit-codes.mjs";
import { OutputError, fileSink, stdoutSink } from "./output.mjs";
import { loadPackage, settle } from "./package-entry.mjs";
import { plural } from "./progress.mjs";
import { resumeCommand } from "./resume-command.mjs";
import { createRowFormat } from "./row-format.mjs";
import { readState, writeState } from "./state-file.mjs";
import { UsageError } from "./usage-error.mjs";

/** The state file must describe this very watch, or resuming from it would mix outputs. */
function checkState(state, { jobUid, values, format, out }) {
  const file = values.state;
  if (state.jobUid !== jobUid) throw new UsageError(`--state ${file} follows run ${state.jobUid}, not ${jobUid}: use another --state file`);
  if (state.format !== format) throw new UsageError(`--format ${format}: --state ${file} was written with --format ${state.format}`);
  if (state.out !== out) throw new UsageError(`--out: --state ${file} was written for ${state.out === null ? "stdout" : `--out ${state.out}`}`);
  if (values.cursor !== undefined) throw new UsageError(`--cursor: --state ${file} already holds where to resume; give one or the other`);
}

/**
 * Opens the output and the format that continues it: a new document, the one the state
 * describes (cut back to its last recorded batch), or, after `--cursor`, what the file holds.
 */
async function openRows({ values, state, format: name, reporter }) {
  const onLateField = (field, row) =>
    reporter.note(`--format csv: field ${JSON.stringify(field)} first appears in row ${row.toLocaleString("en")}, after the header was written: it is left out of the CSV (--format ndjson keeps every field)`);
  if (values.out === undefined) {
    // stdout: every invocation writes a whole document of the rows it delivers.
    return { output: stdoutSink(), format: createRowFormat(name, { onLateField }) };
  }
  if (state) {
    const output = await fileSink(values.out, { at: state.outBytes });
    return { output, format: createRowFormat(name, { rowsBefore: state.rows, columns: state.columns, onLateField }) };
  }
  if (values.cursor === undefined) return { output: await fileSink(values.out, { at: null }), format: createRowFormat(name, { onLateField }) };
  const output = await fileSink(values.out, { at: "end" });
  if (output.bytes === 0) return { output, format: createRowFormat(name, { onLateField }) };
  if (name === "csv") {
    const columns = parseCsvRecords(await output.firstLine())[0]?.fields ?? null;
    return { output, format: createRowFormat(name, { rowsBefore: 1, columns, onLateField }) };
  }
  if (name === "json") {
    // Continue the array: drop its closing bracket, and know whether a row precedes.
    const tail = await output.tail(64);
    const closed = /\n?\]\s*$/.exec(tail);
    if (closed) await output.cutTo(output.bytes - (tail.length - closed.index));
    const rowsBefore = (await output.tail(1)) === "[" ? 0 : 1;
    return { output, format: createRowFormat(name, { rowsBefore, onLateField }) };
  }
  return { output, format: createRowFormat(name, { onLateField }) };
}

/** Wraps `fetch` to count requests and failed attempts (429, 5xx, no response) for the progress line. */
function countingFetch(counts, changed) {
  return async (input, init) => {
    counts.requests += 1;
    changed();
    try {
      const response = await fetch(input, init);
      if (response.status === 429 || response.status >= 500) {
        counts.retries += 1;
        changed();
      }
      return response;
    } catch (error) {
      if (init?.signal?.aborted !== true) {
        counts.retries += 1;
        changed();
      }
      throw error;
    }
  };
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
      }),
    );
  } catch (error) {
    throw error instanceof TypeError ? optionError(error) : error;
  }
}

/**
 * Watches `jobUid` to its end; resolves with the exit code.
 * @param {{ jobUid: string, workflowUid?: string, values: Record<string, any>,
 *   connection: object, reporter: ReturnType<import("./progress.mjs").createReporter>,
 *   interrupt: { requested: boolean, on(fn: () => void): void } }} ctx
 */
export async function watch({ jobUid, workflowUid, values, connection, reporter, interrupt }) {
  const format = values.format ?? "ndjson";
  const out = values.out === undefined ? null : path.resolve(values.out);
  const state = values.state === undefined ? null : await readState(values.state);
  if (state) checkState(state, { jobUid, values, format, out });
  const { JobPoller } = await loadPackage();

  let rows = state?.rows ?? 0;
  let cursor = state?.cursor ?? values.cursor ?? null;
  let runStatus = null;
  let output = null;
  let rowsFormat = null;
  const startedAt = Date.now();
  const counts = { requests: 0, retries: 0 };
  const showProgress = () => reporter.progress({ rows, status: runStatus, requests: counts.requests, retries: counts.retries, startedAt });
  const saveState = (done = false) =>
    values.state === undefined
      ? Promise.resolve()
      : writeState(values.state, { jobUid, ...(workflowUid ? { workflowUid } : {}), cursor, rows, format, out, outBytes: output.bytes, columns: rowsFormat.columns, done }).catch((error) => {
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
    fetch: countingFetch(counts, showProgress),
    onBatch(batch) {
      writing = deliver(batch);
      return writing;
    },
    onStatus(run) {
      runStatus = run.status;
      const count = run.rowCount === null || run.rowCount === undefined ? "" : ` (row_count ${run.rowCount.toLocaleString("en")})`;
      reporter.log(`status: ${run.status}${count}`);
      showProgress();
    },
  });

  ({ output, format: rowsFormat } = await openRows({ values, state, format, reporter }));
  if (output.bytes === 0) await output.write(rowsFormat.start());
  await saveState().catch(async (error) => {
    await output.close();
    throw new UsageError(error.message);
  });
  interrupt.on(() => poller.stop());
  reporter.log(`watching run ${jobUid}${cursor ? " from its saved cursor" : ""}`);
  showProgress();
  const outcome = await settle(poller.start());
  await writing.catch(() => {});
  reporter.end();

  await output.write(rowsFormat.end()).catch(() => {}); // a JSON array is closed even when interrupted
  await output.sync().catch(() => {});
  await output.close();

  return reportOutcome({ outcome, writeError, rows, cursor, counts, jobUid, values, reporter, interrupt, saveState });
}

/** Says how the watch ended, on stderr, and gives the exit code. */
async function reportOutcome({ outcome, writeError, rows, cursor, counts, jobUid, values, reporter, interrupt, saveState }) {
  const where = values.out === undefined ? "" : ` to ${values.out}`;
  if (writeError) {
    // `| head` closed the pipe: the reader has what it wanted; say nothing more.
    if (writeError.code !== "EPIPE") reporter.say(`error: ${writeError.message}; ${plural(rows, "row")} written${where}`);
    return EXIT.RUN_FAILED;
  }
  const summary = outcome.value;
  // A package older than the quiet stop() rejects ABORTED after stop() instead of resolving "stopped".
  const stopped = summary?.status === "stopped" || (interrupt.requested && outcome.error?.code === "ABORTED");
  if (stopped) {
    const command = resumeCommand({ jobUid, values, cursor });
    reporter.say(`interrupted: ${plural(rows, "row")} written${where}. To resume:\n  ${command}`);
    return EXIT.INTERRUPTED;
  }
  if (outcome.error) {
    const error = outcome.error;
    if (error instanceof TypeError) throw optionError(error);
    reporter.say(`error: ${error.code ? `${error.code}: ` : ""}${error.message}${error.runStatus ? ` (run status ${error.runStatus})` : ""}; ${plural(rows, "row")} written${where}`);
    return exitCodeFor(error);
  }
  await saveState(true);
  const requests = summary.requests ?? counts.requests;
  const retries = summary.retries ?? counts.retries;
  reporter.note(`done: run ${summary.status}, ${plural(rows, "row")}${where}, ${plural(requests, "request")}, ${plural(retries, "retry", "retries")}, ${(summary.durationMs / 1000).toFixed(1)} s`);
  if (String(summary.status).toLowerCase() === "warning") {
    reporter.say("note: the run ended with status warning: some inputs failed; they can be retried in Captain Data");
  }
  return EXIT.OK;
}
