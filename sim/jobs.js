// One simulated run: its timeline (pending → running → outcome), its rows and its pages.
import { createFaults, validateFaultPlan } from "./faults.js";
import { HOSTILE_KINDS } from "./hostile.js";
import { hashString } from "./random.js";
import { makeRow } from "./rows.js";

export const ALL_INPUTS_FAILED = "All Inputs Failed";
const OUTCOMES = ["finished", "completed", "warning", "shutdown", "stopped", "allInputsFailed"];
const TERMINAL = new Set(["finished", "completed", "warning", "shutdown", "stopped"]);
const SUCCESS = new Set(["finished", "completed", "warning"]);
export const NEXT_FORMS = ["url", "path", "query", "page", "pageString"];
const STATUS_CASES = ["lower", "upper", "title"];

/**
 * @typedef {import("./faults.js").FaultPlan} FaultPlan
 * @typedef {{ rows?: number, durationMs?: number, pageSize?: number, inputs?: number,
 *   startDelayMs?: number,
 *   outcome?: "finished" | "completed" | "warning" | "shutdown" | "stopped" | "allInputsFailed",
 *   rowBytes?: number, faults?: FaultPlan, jobUid?: string, name?: string, workflowUid?: string,
 *   nextForm?: "url" | "path" | "query" | "page" | "pageString", pageBase?: 0 | 1,
 *   statusCase?: "lower" | "upper" | "title", resultsWhilePending?: 200 | 404 | null,
 *   countLagMs?: number, arrival?: "linear" | { bursts: number }, webhookLeadMs?: number,
 *   errorShape?: "v3" | "v4", hostile?: null | "huge" | "deep" | "notArray" | "html" | "foreignNext" | "unusableNext",
 *   hostileFrom?: number, hostileBytes?: number, hostileDepth?: number }} JobSpec
 * @typedef {{ status: string, rowsAvailable: number, rowCount: number, startedAt: number | null,
 *   finishedAt: number | null, errorMessage: string | null }} JobState
 *   `rowCount` is what `row_count` says: `rowsAvailable` as it was `countLagMs` ago.
 */

export const JOB_DEFAULTS = Object.freeze({
  rows: 2000,
  durationMs: 20000,
  pageSize: 1000,
  inputs: 50,
  startDelayMs: 0,
  outcome: "finished",
  rowBytes: 200,
  nextForm: "url",
  pageBase: 1,
  statusCase: "lower",
  resultsWhilePending: null,
  countLagMs: 0,
  arrival: "linear",
  webhookLeadMs: 0,
  hostile: null,
  hostileFrom: 0,
  hostileBytes: 20e6,
  hostileDepth: 100000,
});

/** @param {string} status */
export function isTerminal(status) {
  return TERMINAL.has(status);
}

/** @param {string} status */
export function isSuccess(status) {
  return SUCCESS.has(status);
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
  checkCount(spec, "countLagMs", 0);
  checkCount(spec, "webhookLeadMs", 0);
  checkCount(spec, "hostileFrom", 0);
  checkCount(spec, "hostileBytes", 0);
  checkCount(spec, "hostileDepth", 1);
  oneOf(spec, "hostile", [null, ...HOSTILE_KINDS]);
  oneOf(spec, "outcome", OUTCOMES);
  oneOf(spec, "nextForm", NEXT_FORMS);
  oneOf(spec, "pageBase", [0, 1]);
  oneOf(spec, "statusCase", STATUS_CASES);
  oneOf(spec, "resultsWhilePending", [null, 200, 404]);
  if (spec.errorShape !== undefined) oneOf(spec, "errorShape", ["v3", "v4"]);
  const { arrival } = spec;
  const bursts = arrival?.bursts;
  if (arrival !== "linear" && !(Number.isInteger(bursts) && bursts >= 1))
    throw new TypeError(`Expected job \`arrival\` to be "linear" or { bursts: integer ≥ 1 } (got ${JSON.stringify(arrival)})`);
  validateFaultPlan(spec.faults);
}

function oneOf(spec, name, values) {
  if (!values.includes(spec[name]))
    throw new TypeError(`Expected job \`${name}\` to be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`);
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
    /** When it leaves `pending`: after `startDelayMs`, or earlier by `startNow()`. */
    startsAt: createdAt + full.startDelayMs,
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
    rowCount: failedInputs ? 0 : rows,
    startedAt: Math.min(job.startsAt, finishedAt),
    finishedAt,
    errorMessage: failedInputs ? ALL_INPUTS_FAILED : outcome === "shutdown" ? "Job was shut down" : null,
  };
}

/** Rows that exist after `ran` ms of running: linearly, or in `bursts` steps at k·duration/n. */
function rowsAfter(spec, rows, ran) {
  const bursts = spec.arrival?.bursts;
  if (bursts) return Math.floor((rows * Math.floor((bursts * ran) / spec.durationMs)) / bursts);
  return Math.floor((rows * ran) / spec.durationMs);
}

function timelineState(job, now) {
  if (job.forced && now >= job.forced.finishedAt) return job.forced;
  const { spec } = job;
  const rows = spec.outcome === "allInputsFailed" ? 0 : spec.rows;
  const startedAt = job.startsAt;
  if (now < startedAt)
    return { status: "pending", rowsAvailable: 0, rowCount: 0, startedAt: null, finishedAt: null, errorMessage: null };
  const ran = now - startedAt;
  if (ran < spec.durationMs) {
    const rowsAvailable = rowsAfter(spec, rows, ran);
    return { status: "running", rowsAvailable, rowCount: rowsAvailable, startedAt, finishedAt: null, errorMessage: null };
  }
  return endState(job, spec.outcome, startedAt + spec.durationMs, rows);
}

/**
 * The run as it stands at `now`: rows arrive while running (linearly or in bursts), all of
 * them at the end; `rowCount` lags `countLagMs` behind.
 * @returns {JobState}
 */
export function jobState(job, now) {
  const state = timelineState(job, now);
  const lag = job.spec.countLagMs;
  if (!lag) return state;
  const then = timelineState(job, now - lag);
  return { ...state, rowCount: Math.min(state.rowsAvailable, then.rowsAvailable) };
}

/** Ends a job's pending phase now (its `durationMs` counts from now); no-op once it has started. */
export function startNow(job, now) {
  if (now < job.startsAt) job.startsAt = now;
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

const CASES = {
  lower: (s) => s,
  upper: (s) => s.toUpperCase(),
  title: (s) => s.charAt(0).toUpperCase() + s.slice(1),
};

/**
 * `GET /jobs/{uid}` body. `flap` replaces "running" by another non-terminal status;
 * `statusCase` changes the letter case of the status on the wire.
 */
export function runBody(job, state) {
  const status = state.status === "running" && job.faults.flaps ? job.faults.flapStatus() : state.status;
  return {
    uid: job.uid,
    name: job.name,
    workflow_uid: job.workflowUid,
    status: CASES[job.spec.statusCase](status),
    row_count: state.rowCount,
    total_row_count: state.rowCount,
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
 * `paging.next` for the page whose `page` parameter is `number`, in the job's `nextForm`.
 * @param {{ origin: string, path: string }} results where the results endpoint is
 */
export function nextLink(form, number, { origin, path }) {
  if (form === "page") return number;
  if (form === "pageString") return String(number);
  if (form === "query") return `?page=${number}`;
  if (form === "path") return `${path}?page=${number}`;
  return `${origin}${path}?page=${number}`;
}

/**
 * `GET /jobs/{uid}/results?page=N` body: a fixed-size slice of the rows available now.
 * `index` is 0-based (the `page` parameter minus the job's `pageBase`).
 * With `duplicateRows: k`, page N+1 starts with the last k rows of page N.
 * @param {{ origin: string, path: string }} results where the results endpoint is, for `paging.next`
 */
export function resultsBody(job, state, index, results) {
  const size = job.spec.pageSize;
  const overlap = index > 0 ? Math.min(job.faults.duplicateRows, size - 1) : 0;
  const start = Math.max(0, index * size - overlap);
  const end = Math.min((index + 1) * size, state.rowsAvailable);
  const hasNext = state.rowsAvailable > (index + 1) * size;
  const next = hasNext ? nextLink(job.spec.nextForm, index + 1 + job.spec.pageBase, results) : null;
  return {
    results: start < end ? rowsBetween(job, start, end) : [],
    paging: { have_next_page: hasNext, next },
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
    endsAt: job.startsAt + job.spec.durationMs,
    spec: job.spec,
  };
}
