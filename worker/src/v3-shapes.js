// What the worker serves, in the shapes of Captain Data v3, from a run's stored state.

import { isFinalError } from "captaindata-poller";
import { ALL_INPUTS_FAILED_TEXT, classifyStatus } from "captaindata-poller/rules";
import { isIncomplete, isWorkerFinal } from "./limits.js";

// The crate's words, served in Captain Data's case ("All Inputs Failed"); readers match any case.
const ALL_INPUTS_FAILED = ALL_INPUTS_FAILED_TEXT.replace(/\b\w/g, (letter) => letter.toUpperCase());

/** The worker gave the run up on a failure that polling again can change. */
const isGivenUp = (run) => Boolean(run.done && run.error_code && !isFinalError({ code: run.error_code }) && !isWorkerFinal(run.error_code));

// What readers see while a setting is wrong: the setting itself is named only to operators
// (GET /health, the logs), like any configuration value.
const HELD_FOR_CONFIG = "The worker cannot poll this run until its configuration is fixed (its operator sees which setting in GET /health). Polling resumes by itself once it is fixed.";

// Over by the crate's classification: succeeded or failed.
const isTerminal = (status) => ["succeeded", "failed"].includes(classifyStatus(status));

/**
 * The status a reader may see, in lower case whatever case the API used. A terminal status is
 * shown only once the worker has stored every row (`done`): a browser JobPoller completes on
 * it, so showing it early would lose rows.
 */
function visibleStatus(run) {
  const status = String(run.status).toLowerCase();
  // The worker cannot poll it (a setting is wrong): like Captain Data's own "paused" (an
  // integration error), the run is not over and a reader keeps waiting.
  if (!run.done && run.config_error) return "paused";
  if (!run.done) {
    if (status === "unknown") return "pending";
    return isTerminal(status) ? "running" : status;
  }
  // "completed" (the v3 quickstart's word) is served as "finished", which every client knows.
  if (!run.error_code) return status === "warning" ? "warning" : "finished";
  // Given up on a failure that polling again can change (an outage, a budget): the run itself
  // is not over, and tracking it again resumes it. A reader keeps waiting (bounded by its own
  // maxDurationMs) instead of failing with JOB_FAILED.
  if (isGivenUp(run)) return "paused";
  return status === "stopped" ? "stopped" : "shutdown";
}

function visibleError(run) {
  if (!run.done && run.config_error) return HELD_FOR_CONFIG;
  if (!run.done) return null;
  if (!run.error_code) return run.error_message ?? null;
  if (run.error_code === "ALL_INPUTS_FAILED") return ALL_INPUTS_FAILED;
  if (run.error_code === "JOB_FAILED") return run.error_message || "Job failed.";
  // The worker's own end (ROWS_CAP_REACHED, ROWS_MISSING): its message says what was kept, or which batches are missing.
  if (isWorkerFinal(run.error_code)) return run.error_message;
  // The worker's own failure to poll (e.g. its key was refused): say so without details.
  const resume = isGivenUp(run) ? "; tracking it again resumes it" : "";
  return `The worker stopped polling this run (${run.error_code})${resume}.`;
}

/**
 * What a run that ended with rows missing (ROWS_MISSING, ROWS_CAP_REACHED) lacks, null for every
 * other run: `{ batches (at most 100 batch_uids), batch_count, count (rows, or null when not
 * known), run_status (Captain Data's status for the run) }`. A run capped by a v3 step stores
 * nothing of it: no batch is named, the count is not known.
 */
function rowsMissing(run) {
  if (!run.done || !isIncomplete(run.error_code)) return null;
  let stored = null;
  try {
    stored = run.rows_missing ? JSON.parse(run.rows_missing) : null;
  } catch {
    // unreadable: the defaults below
  }
  return {
    batches: Array.isArray(stored?.batches) ? stored.batches : [],
    batch_count: Number.isInteger(stored?.batch_count) ? stored.batch_count : 0,
    count: Number.isInteger(stored?.count) ? stored.count : null,
    run_status: typeof stored?.run_status === "string" ? stored.run_status : String(run.status),
  };
}

const iso = (ms) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** `GET /jobs/{uid}` body. */
export function runBody(run) {
  return {
    uid: run.job_uid,
    name: run.name ?? null,
    workflow_uid: run.workflow_uid ?? null,
    status: visibleStatus(run),
    row_count: run.row_count,
    total_row_count: run.row_count,
    // A v4 run's: the inputs its launch sent; a v3 run's are not read from Captain Data.
    number_inputs: Number.isInteger(run.number_inputs) ? run.number_inputs : null,
    error_message: visibleError(run),
    // Why the worker ended the run, when it did: a pollStep code or the worker's own (ROWS_CAP_REACHED, ROWS_MISSING).
    error_code: run.done ? (run.error_code ?? null) : null,
    rows_missing: rowsMissing(run),
    start_time: iso(run.created_at),
    finish_time: run.done && !isGivenUp(run) ? iso(run.finished_at) : null,
  };
}

/**
 * `GET /jobs/{uid}/results?page=N` body from the page's stored rows (already JSON text, so
 * they are not parsed again). Pages are fixed slices of `pageSize` rows: a page keeps its
 * rows forever and only the last one grows, which is what the JobPoller's cursor expects.
 */
export function resultsBody(rowTexts, { page, pageSize, rowCount, resultsUrl }) {
  const hasNext = rowCount > page * pageSize;
  const paging = { have_next_page: hasNext, next: hasNext ? `${resultsUrl}?page=${page + 1}` : null };
  return `{"results":[${rowTexts.join(",")}],"paging":${JSON.stringify(paging)}}`;
}

/** Whether a stored run was reported missing by Captain Data (served as a 404). */
export function isMissing(run) {
  return Boolean(run.done) && run.error_code === "NOT_FOUND";
}
