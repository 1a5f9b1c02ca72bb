// What a pollStep result does to a stored run, under pollStep's meaning of `done` (the run is
// over for good: completed, or a final error); `error && !done` is a failed step to retry.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyStep } from "../../worker/src/step-outcome.js";

const run = { row_count: 10, failed_steps: 0 };
const limits = { maxFailedSteps: 3, maxRowsPerRun: Infinity };
const step = (over) => ({ results: [], cursor: "c2", status: "running", done: false, requests: 2, ...over });
const error = (code) => ({ code, message: `${code} happened` });

test("a retryable failure (error, done: false) is a failed step: the run goes on from the cursor", () => {
  for (const code of ["RETRIES_EXHAUSTED", "TIMEOUT", "BAD_RESPONSE", "ABORTED"]) {
    const update = applyStep(run, step({ error: error(code) }), limits);
    assert.deepEqual([update.done, update.failedSteps, update.cursor, update.errorCode], [false, 1, "c2", null], code);
  }
});

test("failed steps in a row give the run up at maxFailedSteps; a step with rows starts the count over", () => {
  const failing = step({ error: error("RETRIES_EXHAUSTED") });
  assert.deepEqual([applyStep({ ...run, failed_steps: 2 }, failing, limits).done, applyStep({ ...run, failed_steps: 2 }, failing, limits).errorCode], [true, "RETRIES_EXHAUSTED"]);
  const progress = applyStep({ ...run, failed_steps: 2 }, { ...failing, results: [{}] }, limits);
  assert.deepEqual([progress.done, progress.failedSteps], [false, 1]);
});

test("done ends the run: completed without an error, failed with a final one", () => {
  assert.deepEqual(Object.values(applyStep(run, step({ done: true, status: "finished" }), limits)).slice(0, 4), ["c2", "finished", true, null]);
  const failed = applyStep(run, step({ done: true, status: "shutdown", error: error("JOB_FAILED") }), limits);
  assert.deepEqual([failed.done, failed.errorCode, failed.failedSteps], [true, "JOB_FAILED", 0]);
});

test("the rows cap keeps the first rows and ends the run with ROWS_CAP_REACHED", () => {
  const update = applyStep(run, step({ results: [{}, {}, {}, {}] }), { ...limits, maxRowsPerRun: 12 });
  assert.deepEqual([update.kept, update.done, update.errorCode], [2, true, "ROWS_CAP_REACHED"]);
  assert.equal(applyStep(run, step({ results: [{}, {}] }), { ...limits, maxRowsPerRun: 12 }).done, false, "exactly at the cap is no error");
});
