// One simulated Captain Data v4 async run: its status timeline and the batches of results it
// produces (one RUNNING callback per page, then a final one). Deliveries are v4-callbacks.js's.
import { createFaults, validateFaultPlan } from "./faults.js";
import { hashString } from "./random.js";
import { makeRow } from "./rows.js";

export const V4_STATUSES = Object.freeze([
  "CREATED",
  "INVALID",
  "QUEUED",
  "SCHEDULED",
  "BLOCKED",
  "STOPPED",
  "RUNNING",
  "FAILED",
  "PARTIAL_SUCCEEDED",
  "SUCCEEDED",
]);
const OUTCOMES = ["SUCCEEDED", "PARTIAL_SUCCEEDED", "FAILED", "INVALID", "STOPPED"];
const ERRORS = {
  FAILED: { error_label: "RUN_FAILED", error_scope: "run", message: "The run failed" },
  PARTIAL_SUCCEEDED: { error_label: "PARTIAL_FAILURE", error_scope: "input", message: "Some inputs failed" },
  INVALID: { error_label: "INVALID_INPUT", error_scope: "input", message: "The run is invalid: no input could be processed" },
  STOPPED: { error_label: "RUN_STOPPED", error_scope: "run", message: "The run was stopped" },
};

/**
 * The faults of a run's callbacks (drawn and checked by v4-callbacks.js).
 * @typedef {{ lostRate?: number, lostStatus?: number, duplicateRate?: number, reorderRate?: number,
 *   delayRate?: number, delayMs?: number, unacknowledgedRate?: number, finalLost?: boolean,
 *   replayLostRate?: number }} V4FaultPlan
 *   Per callback (seeded per run): `lostRate` never sent, recorded FAILED with `lostStatus`
 *   (default 502); `delayRate` sent `delayMs` (default 1000) late; `reorderRate` sent just
 *   after the next batch; `duplicateRate` sent twice; `unacknowledgedRate` received, but recorded
 *   FAILED (no answer: `http_status` null), so a replay delivers the batch again. `finalLost`:
 *   the final callback is lost. `replayLostRate`: a replay is lost too.
 */

/**
 * @typedef {{ rows?: number, rowsPerInput?: number, pageSize?: number, durationMs?: number, startDelayMs?: number,
 *   blockedMs?: number, outcome?: "SUCCEEDED" | "PARTIAL_SUCCEEDED" | "FAILED" | "INVALID" | "STOPPED",
 *   rowsInFinal?: boolean, rowBytes?: number, faults?: V4FaultPlan,
 *   apiFaults?: import("./faults.js").FaultPlan }} V4RunSpec
 *   `faults`: what happens to its callbacks (checked by v4-callbacks.js); `apiFaults`: the v3
 *   fault plan, for its API answers. `rowsPerInput` (instead of `rows`): each input of the launch
 *   yields that many rows, paged on its own, as Captain Data's actions run input by input; each
 *   callback then carries its own input (the command line's `--v4-rows` sets this).
 * @typedef {{ index: number, batchUid: string, start: number, end: number, final: boolean, dueAt: number,
 *   input?: number }} Batch `input`: the launch input the page is of (with `rowsPerInput`)
 */

export const V4_RUN_DEFAULTS = Object.freeze({
  rows: 20,
  pageSize: 10,
  durationMs: 1000,
  startDelayMs: 0,
  blockedMs: 0,
  outcome: "SUCCEEDED",
  rowsInFinal: false,
  rowBytes: 200,
});

function validateSpec(spec) {
  if (spec.rowsPerInput !== undefined && !(Number.isInteger(spec.rowsPerInput) && spec.rowsPerInput >= 0)) {
    throw new TypeError(`Expected v4 run \`rowsPerInput\` to be a whole number ≥ 0 (got ${spec.rowsPerInput})`);
  }
  for (const [name, min] of [["rows", 0], ["pageSize", 1], ["durationMs", 0], ["startDelayMs", 0], ["blockedMs", 0], ["rowBytes", 0]]) {
    const v = spec[name];
    if (!(Number.isFinite(v) && v >= min)) throw new TypeError(`Expected v4 run \`${name}\` to be a number ≥ ${min} (got ${v})`);
  }
  if (!OUTCOMES.includes(spec.outcome)) throw new TypeError(`Expected v4 run \`outcome\` to be one of ${OUTCOMES.join(", ")}`);
  if (typeof spec.rowsInFinal !== "boolean") throw new TypeError("Expected v4 run `rowsInFinal` to be a boolean");
  validateFaultPlan(spec.apiFaults);
}

/**
 * The batches of a run: page k of its rows is due at `runningAt + durationMs·(k+1)/pages`; the
 * final callback at the end, carrying the last page when `rowsInFinal`. An INVALID run has no
 * rows: only its final callback, at once.
 */
function planBatches(spec, inputCount, runningAt, newUid) {
  const pages = pagesOf(spec, inputCount);
  const rows = pages.at(-1)?.end ?? 0;
  const endsAt = runningAt + spec.durationMs;
  const running = spec.rowsInFinal ? Math.max(0, pages.length - 1) : pages.length;
  /** @type {Batch[]} */
  const batches = [];
  for (let k = 0; k < running; k++) {
    const dueAt = runningAt + Math.floor((spec.durationMs * (k + 1)) / pages.length);
    batches.push({ index: k, batchUid: newUid(), ...pages[k], final: false, dueAt });
  }
  const last = spec.rowsInFinal && pages.length > 0 ? pages.at(-1) : { start: rows, end: rows };
  batches.push({ index: running, batchUid: newUid(), ...last, final: true, dueAt: spec.outcome === "INVALID" ? runningAt : endsAt });
  return batches;
}

/**
 * The pages of a run's rows, `{ start, end, input? }`: `rows` cut into pages of `pageSize`; with
 * `rowsPerInput`, each input's rows paged on their own (a page never holds two inputs' rows).
 */
function pagesOf(spec, inputCount) {
  if (spec.outcome === "INVALID") return [];
  const size = Math.floor(spec.pageSize);
  const perInput = spec.rowsPerInput;
  const cut = (from, to, input) => {
    const out = [];
    for (let start = from; start < to; start += size) out.push({ start, end: Math.min(to, start + size), ...(input === undefined ? {} : { input }) });
    return out;
  };
  if (perInput === undefined) return cut(0, Math.floor(spec.rows));
  return Array.from({ length: inputCount }, (_, i) => cut(i * perInput, (i + 1) * perInput, i)).flat();
}

/**
 * @param {string} uid
 * @param {V4RunSpec} spec merged with the simulator's defaults
 * @param {{ action: string, inputs: unknown[], customData: unknown, callback: { url: string, headers: Record<string, string> } }} launch
 * @param {number} createdAt
 * @param {number} seed the simulator's seed
 * @param {() => string} newUid draws the batch uids
 */
export function createV4Run(uid, spec, launch, createdAt, seed, newUid) {
  const full = { ...V4_RUN_DEFAULTS, ...spec, faults: spec.faults ?? {}, apiFaults: spec.apiFaults ?? {} };
  validateSpec(full);
  const invalid = full.outcome === "INVALID";
  const startsAt = createdAt + (invalid ? 0 : full.startDelayMs);
  const runningAt = startsAt + (invalid ? 0 : full.blockedMs);
  return {
    uid,
    ...launch,
    spec: full,
    createdAt,
    startsAt,
    runningAt,
    endsAt: invalid ? createdAt : runningAt + full.durationMs,
    batches: planBatches(full, launch.inputs.length, runningAt, newUid),
    /** Set by stop(): `{ at }`. */
    stopped: null,
    apiFaults: createFaults(full.apiFaults, (seed ^ hashString(`v4:${uid}`)) >>> 0),
  };
}

/** The run's status at `now`. */
export function v4Status(run, now) {
  if (run.spec.outcome === "INVALID") return "INVALID";
  if (run.stopped && now >= run.stopped.at) return "STOPPED";
  if (now < run.startsAt) return "QUEUED";
  if (now < run.runningAt) return "BLOCKED";
  if (now < run.endsAt) return "RUNNING";
  return run.spec.outcome;
}

const TERMINAL = new Set(["INVALID", "STOPPED", "FAILED", "PARTIAL_SUCCEEDED", "SUCCEEDED"]);

/** @param {string} status */
export const isV4Terminal = (status) => TERMINAL.has(status);

/**
 * Stops the run now: the pages produced so far stay, the rest is never produced, and the final
 * callback (STOPPED) is due now. Returns the batches dropped (not produced yet), or null (no-op)
 * when the run is over already.
 */
export function stopV4Run(run, now) {
  if (isV4Terminal(v4Status(run, now))) return null;
  run.stopped = { at: now };
  const final = run.batches.at(-1);
  const kept = run.batches.filter((b) => !b.final && b.dueAt <= now);
  const dropped = run.batches.filter((b) => !b.final && b.dueAt > now);
  const rows = kept.at(-1)?.end ?? 0;
  run.batches = [...kept, { ...final, index: kept.length, start: rows, end: rows, dueAt: now }];
  return dropped;
}

const iso = (ms) => (ms === null ? null : new Date(ms).toISOString());

/** The final status of a run as its final callback reports it. */
function finalStatus(run) {
  return run.stopped ? "STOPPED" : run.spec.outcome;
}

/** The callback body of one batch: `{ run: { run_uid, batch_uid, status }, input, custom_data, error, results }`. */
export function callbackBody(run, batch) {
  const status = batch.final ? finalStatus(run) : "RUNNING";
  const results = [];
  for (let i = batch.start; i < batch.end; i++) results.push(makeRow(run.uid, i, run.spec.rowBytes));
  const inputs = run.inputs;
  return {
    run: { run_uid: run.uid, batch_uid: batch.batchUid, status },
    input: batch.final || inputs.length === 0 ? null : (inputs[batch.input ?? batch.index % inputs.length] ?? null),
    custom_data: run.customData ?? null,
    error: batch.final ? (ERRORS[status] ?? null) : null,
    results: status === "INVALID" ? null : results,
  };
}

/** `GET /v4/runs/{uid}` body. */
export function v4RunBody(run, now, workspaceUid) {
  const status = v4Status(run, now);
  const over = isV4Terminal(status);
  const finishedAt = over ? (run.stopped?.at ?? run.endsAt) : null;
  return {
    uid: run.uid,
    action_name: run.action,
    execution_mode: "ASYNC",
    status,
    inputs_count: run.inputs.length,
    created_at: iso(run.createdAt),
    updated_at: iso(Math.min(now, finishedAt ?? now)),
    started_at: now >= run.runningAt && status !== "INVALID" ? iso(run.runningAt) : null,
    finished_at: iso(finishedAt),
    error: over ? (ERRORS[status] ?? null) : null,
    workspace_uid: workspaceUid,
  };
}

/** What the simulator exposes about a v4 run to tests. */
export function describeV4Run(run, now) {
  const status = v4Status(run, now);
  return {
    runUid: run.uid,
    action: run.action,
    status,
    rows: run.batches.at(-1)?.end ?? 0,
    batches: run.batches.map((b) => ({ batchUid: b.batchUid, rows: b.end - b.start, final: b.final, dueAt: b.dueAt })),
    createdAt: run.createdAt,
    endsAt: run.stopped?.at ?? run.endsAt,
    callbackUrl: run.callback.url,
    spec: run.spec,
  };
}
