// The worker's own limits on what it keeps (personal data: scraped profiles), and the named
// errors a caller or a reader gets when one is reached. Nothing is dropped silently.

/** A run reached MAX_ROWS_PER_RUN: its first rows are kept and served, the rest is not stored. */
export const ROWS_CAP_REACHED = "ROWS_CAP_REACHED";

/**
 * A run ended with rows the worker knows are missing: batches its safety net could not recover
 * (their replays exhausted, or V4_GIVE_UP_MS without progress). Served `shutdown`, never
 * `finished`, with `rows_missing` naming the batches.
 */
export const ROWS_MISSING = "ROWS_MISSING";

/** Batch uids `rows_missing.batches` lists at most (`batch_count` is always the whole count). */
export const LISTED_MISSING_BATCHES = 100;

/** MAX_TRACKED_RUNS runs are stored already: a new one is not tracked (nor launched). */
export const TRACKED_RUNS_CAP_REACHED = "TRACKED_RUNS_CAP_REACHED";

/** Codes that end a run for good on the worker's side (tracking it again does not resume it). */
const WORKER_FINAL = new Set([ROWS_CAP_REACHED, ROWS_MISSING]);

/** The codes of a run that ended with rows missing: served with `rows_missing`. */
const INCOMPLETE = new Set([ROWS_CAP_REACHED, ROWS_MISSING]);

/** Whether a stored `error_code` says the run ended with rows missing. */
export const isIncomplete = (code) => INCOMPLETE.has(code);

/** Whether a stored `error_code` is the worker's own final one. */
export const isWorkerFinal = (code) => WORKER_FINAL.has(code);

/**
 * How many of a step's rows fit under the cap, and the error when some do not.
 * @returns {{ kept: number, error: { code: string, message: string } | null }}
 */
export function rowsUnderCap(stored, arrived, maxRowsPerRun) {
  if (stored + arrived <= maxRowsPerRun) return { kept: arrived, error: null };
  const kept = Math.max(0, maxRowsPerRun - stored);
  const message = `The worker keeps at most ${maxRowsPerRun} rows of a run (MAX_ROWS_PER_RUN): it stored the first ${maxRowsPerRun} and no more (${ROWS_CAP_REACHED}).`;
  return { kept, error: { code: ROWS_CAP_REACHED, message } };
}

/** The answer to a /track or a launch when MAX_TRACKED_RUNS runs are stored. */
export function trackedRunsCapBody(maxTrackedRuns) {
  return {
    code: TRACKED_RUNS_CAP_REACHED,
    message: `The worker stores at most ${maxTrackedRuns} runs (MAX_TRACKED_RUNS): delete runs (DELETE /v3/jobs/{uid}) or wait for RETENTION_DAYS to remove ended ones.`,
  };
}
