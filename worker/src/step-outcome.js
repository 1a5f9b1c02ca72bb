// What one pollStep result means for a stored run: its new state and when to step again.
// Pure (no storage, no clock): the RunTracker applies it in one transaction.

import { rowsUnderCap } from "./limits.js";

/**
 * @param {object} run the stored run before the step
 * @param {{ results: unknown[], cursor: string, status: string, done: boolean,
 *   error?: { code: string, message: string }, requests: number }} step
 * @param {{ maxFailedSteps: number, maxRowsPerRun: number }} limits
 * @returns {{ cursor: string, status: string, done: boolean, errorCode: string | null,
 *   errorMessage: string | null, failedSteps: number, kept: number }} `kept`: how many of the
 *   step's rows to store (fewer than it brought only when the rows cap is reached)
 */
export function applyStep(run, step, limits) {
  // pollStep's `done` is the end for good (completed, or a final error); an error without it is
  // a transient failure (retries or time ran out in this step): the next step resumes from the cursor.
  const failed = Boolean(step.error) && !step.done;
  // Failed steps in a row without progress: a step that stored rows before failing shows the
  // API works, so it starts the count (and the back-off) over instead of growing them.
  const failedSteps = failed ? (step.results.length > 0 ? 1 : run.failed_steps + 1) : 0;
  // A transient failure only ends the run when it keeps happening.
  const givesUp = failed && failedSteps >= limits.maxFailedSteps;
  const cap = rowsUnderCap(run.row_count, step.results.length, limits.maxRowsPerRun);
  const error = cap.error ?? step.error;
  const done = Boolean(cap.error) || step.done || givesUp;
  return {
    cursor: step.cursor,
    status: step.status,
    done,
    errorCode: done && error ? error.code : null,
    errorMessage: done && error ? String(error.message ?? "") : null,
    failedSteps: cap.error ? 0 : failedSteps,
    kept: cap.kept,
  };
}

/**
 * Milliseconds until the next step, or null to wait for the cron tick. After a failed step the
 * back-off comes first (cron kicks keep it too); otherwise a step that used its whole request
 * budget has more to read: it continues at once, in a new invocation.
 */
export function nextStepIn(update, step, { stepRequests, pollIntervalMs, failedStepBackoffMs }, webhookPending) {
  if (update.done) return null;
  if (update.failedSteps > 0) {
    const backoff = failedStepBackoffMs * 2 ** (Math.min(update.failedSteps, 10) - 1);
    return Math.min(backoff, Math.max(pollIntervalMs, 60000));
  }
  if (webhookPending || step.requests >= stepRequests) return 0;
  return pollIntervalMs > 0 ? pollIntervalMs : null;
}
