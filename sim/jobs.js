// One simulated run: its timeline (pending → running → outcome), its rows and its pages.
import { createFaults, validateFaultPlan } from "./faults.js";
import { hashString } from "./random.js";
import { makeRow } from "./rows.js";

export const ALL_INPUTS_FAILED = "All Inputs Failed";
const OUTCOMES = ["finished", "warning", "shutdown", "stopped", "allInputsFailed"];
const TERMINAL = new Set(["finished", "warning", "shutdown", "stopped"]);

/**
 * @typedef {import("./faults.js").FaultPlan} FaultPlan
 * @typedef {{ rows?: number, durationMs?: number, pageSize?: number, inputs?: number,
 *   startDelayMs?: number, outcome?: "finished" | "warning" | "shutdown" | "stopped" | "allInputsFailed",
 *   rowBytes?: number, faults?: FaultPlan, jobUid?: string, name?: string, workflowUid?: string }} JobSpec
 * @typedef {{ status: string, rowsAvailable: number, startedAt: number | null,
 *   finishedAt: number | null, errorMessage: string | null }} JobState
 */

export const JOB_DEFAULTS = Object.freeze({
  rows: 2000,
  durationMs: 20000,
  pageSize: 100,
  inputs: 50,
  startDelayMs: 0,
  outcome: "finished",
  rowBytes: 200,
});

/** @param {string} status */
export function isTerminal(status) {
  return TERMINAL.has(status);
}

function checkCount(spec, name, min) {
  const v = spec[name];
  if (!(Number.isFinite(v) && v >= min))
    throw new TypeError(`Expected job \`${name}\` to be a number ≥ ${min} (got ${v})`);
}

/**
 * Validates a spec merged with the defaults; throws a TypeError naming the field.
 * @param {JobSpec} spec
 */
function validateSpec(spec) {
  checkCount(spec, "rows", 0);
  checkCount(spec, "durationMs", 0);
  checkCount(spec, "pageSize", 1);
  checkCount(spec, "inputs", 0);
  checkCount(spec, "startDelayMs", 0);
  checkCount(spec, "rowBytes", 0);
  if (!OUTCOMES.includes(spec.outcome))
    throw new TypeError(`Expected job \`outcome\` to be one of ${OUTCOMES.join(", ")}`);
  validateFaultPlan(spec.faults);
}

/**
 * @param {string} uid
 * @param {JobSpec} spec already merged with defaults
 * @param {number} createdAt clock time
 * @param {number} seed the simulator's seed
 */
export function createJob(uid, spec, createdAt, seed) {
  const full = { ...JOB_DEFAULTS, ...spec, faults: spec.faults ?? {} };
  validateSpec(full);
  full.rows = Math.floor(full.rows);
  full.pageSize = Math.floor(full.pageSize);
  return {
    uid,
    name: full.name ?? "Simulated run",
    workflowUid: full.workflowUid ?? "sim-workflow",
    spec: full,
    createdAt,
    faults: createFaults(full.faults, (seed ^ hashString(uid)) >>> 0),
    /** @type {JobState | null} set by finish()/stop() */
    forced: null,
    webhookSent: false,
    rowCache: [],
  };
}

function endState(job, outcome, finishedAt, rows) {
  const failedInputs = outcome === "allInputsFailed";
  return {
    status: failedInputs ? "shutdown" : outcome,
    rowsAvailable: failedInputs ? 0 : rows,
    startedAt: Math.min(job.createdAt + job.spec.startDelayMs, finishedAt),
    finishedAt,
    errorMessage: failedInputs ? ALL_INPUTS_FAILED : outcome === "shutdown" ? "Job was shut down" : null,
  };
}

/**
 * The run as it stands at `now`: rows arrive linearly while running, all of them at the end.
 * @returns {JobState}
 */
export function jobState(job, now) {
  if (job.forced && now >= job.forced.finishedAt) return job.forced;
  const { spec } = job;
  const rows = spec.outcome === "allInputsFailed" ? 0 : spec.rows;
  const startedAt = job.createdAt + spec.startDelayMs;
  if (now < startedAt)
    return { status: "pending", rowsAvailable: 0, startedAt: null, finishedAt: null, errorMessage: null };
  const ran = now - startedAt;
  if (ran < spec.durationMs) {
    const rowsAvailable = Math.floor((rows * ran) / spec.durationMs);
    return { status: "running", rowsAvailable, startedAt, finishedAt: null, errorMessage: null };
  }
  return endState(job, spec.outcome, startedAt + spec.durationMs, rows);
}

/** Force an end now: `finish` delivers every row, `stop` keeps the rows so far. */
export function forceEnd(job, now, outcome, keepRowsSoFar) {
  if (!OUTCOMES.includes(outcome)) throw new TypeError(`Expected status to be one of ${OUTCOMES.join(", ")}`);
  const current = jobState(job, now);
  if (isTerminal(current.status)) return current;
  const rows = keepRowsSoFar ? current.rowsAvailable : job.spec.rows;
  job.forced = endState(job, outcome, now, rows);
  return job.forced;
}

const iso = (ms) => (ms === null ? null : new Date(ms).toISOString());

/** `GET /jobs/{uid}` body. `flap` replaces "running" by another non-terminal status. */
export function runBody(job, state) {
  const status = state.status === "running" && job.faults.flaps ? job.faults.flapStatus() : state.status;
  return {
    uid: job.uid,
    name: job.name,
    workflow_uid: job.workflowUid,
    status,
    row_count: state.rowsAvailable,
    total_row_count: state.rowsAvailable,
    number_inputs: job.spec.inputs,
    error_message: state.errorMessage,
    start_time: iso(state.startedAt),
    finish_time: iso(state.finishedAt),
  };
}

/** Rows [start, end), generated once and cached. */
export function rowsBetween(job, start, end) {
  const out = [];
  for (let i = start; i < end; i++) {
    job.rowCache[i] ??= makeRow(job.uid, i, job.spec.rowBytes);
    out.push(job.rowCache[i]);
  }
  return out;
}

/**
 * `GET /jobs/{uid}/results?page=N` body: a fixed-size slice of the rows available now.
 * With `duplicateRows: k`, page N+1 starts with the last k rows of page N.
 * @param {string} nextBase absolute URL of the results endpoint, for `paging.next`
 */
export function resultsBody(job, state, page, nextBase) {
  const size = job.spec.pageSize;
  const overlap = page > 1 ? Math.min(job.faults.duplicateRows, size - 1) : 0;
  const start = Math.max(0, (page - 1) * size - overlap);
  const end = Math.min(page * size, state.rowsAvailable);
  const hasNext = state.rowsAvailable > page * size;
  return {
    results: start < end ? rowsBetween(job, start, end) : [],
    paging: { have_next_page: hasNext, next: hasNext ? `${nextBase}?page=${page + 1}` : null },
  };
}

/** What the simulator exposes about a job to tests and the demo. */
export function describeJob(job, state) {
  return {
    jobUid: job.uid,
    name: job.name,
    workflowUid: job.workflowUid,
    status: state.status,
    rowsAvailable: state.rowsAvailable,
    rows: job.spec.rows,
    errorMessage: state.errorMessage,
    startTime: iso(state.startedAt),
    finishTime: iso(state.finishedAt),
    createdAt: job.createdAt,
    endsAt: job.createdAt + job.spec.startDelayMs + job.spec.durationMs,
    spec: job.spec,
  };
}
