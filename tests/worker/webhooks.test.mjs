// Webhooks are hints, never the proof of the end: Created and unknown events change nothing; an
// end event makes the run step now, and the run ends only when Captain Data's status says so.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { rowIds, startWorker } from "./worker-fixture.mjs";

// Tests that pass only once pollStep({ webhook }) reads the status and drains instead of ending.

let w;
// The simulator's clock moves only when a test says so: a run is "running" at the API for as long
// as a test needs it, and its webhooks go out when the test advances the clock (then sim.tick()).
const clock = manualClock(Date.now());
before(async () => {
  // POLL_INTERVAL_MS 0: between webhooks only cron ticks step a run, so a step is the webhook's doing.
  // WEBHOOK_MIN_GAP_MS 0: these tests are about what a webhook means, not how often one may step a run.
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", WEBHOOK_MIN_GAP_MS: "0" }, sim: { clock } });
});

/** Moves the simulated time on by `ms` and sends the webhooks that are due. */
function advance(ms) {
  clock.advance(ms);
  w.sim.tick();
}
after(() => w.close());

test("Created and unknown webhooks are acknowledged and change nothing; an end webhook steps at once", async () => {
  const { jobUid } = w.sim.createJob({ rows: 60, durationMs: 60000, pageSize: 10 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored"); // no other step comes
  const sent = w.sim.stats(jobUid).requests.total;
  for (const message of ["Job successfully created.", "JOB SUCCESSFULLY CREATED.", "Job was paused.", undefined]) {
    const res = await w.webhook({ job_uid: jobUid, message, error: null });
    assert.deepEqual([res.status, res.body.state], [200, "ignored"], String(message));
  }
  // No alarm due and nothing in flight: a step the webhooks caused would be one or the other.
  await w.untilNoStepDue(jobUid, "nothing stepped by the ignored webhooks");
  assert.equal(w.sim.stats(jobUid).requests.total, sent, "no step was triggered");
  assert.equal((await w.run(jobUid, token)).body.status, "running");

  // The run really ends; its webhook, in capitals, is matched all the same and steps at once.
  w.sim.finish(jobUid);
  const end = await w.webhook({ job_uid: jobUid, message: "JOB SUCCESSFULLY FINISHED.", error: null });
  assert.deepEqual([end.status, end.body.state], [202, "accepted"]);
  const run = await w.untilDone(jobUid, token, { ticking: false });
  assert.equal(run.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(60));
});

test("statuses in capitals (FINISHED) end the run, served in lower case", async () => {
  const { jobUid } = w.sim.createJob({ rows: 40, durationMs: 300, pageSize: 10, statusCase: "upper" });
  const token = await w.track(jobUid);
  advance(300);
  const run = await w.untilDone(jobUid, token);
  assert.equal(run.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(40));
});

test(
  "a success webhook that arrives before the API says finished: the run is not marked finished early, and ends with every row",
  async () => {
    // The simulator sends "Job successfully finished." 1.2 s (of its clock) before its status says so.
    const { jobUid } = w.sim.createJob({ rows: 100, durationMs: 1600, pageSize: 10, webhookLeadMs: 1200 });
    const token = await w.track(jobUid);
    await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored");
    advance(500); // the early webhook goes out; the API says running with 31 rows
    await w.until(() => w.sim.webhooks().some((h) => h.jobUid === jobUid && h.event === "succeeded" && h.status === 202), "the early webhook");
    const made = w.sim.job(jobUid).rowsAvailable;
    // The step the webhook caused stored what the API has (no other step comes: no ticks).
    const seen = await w.untilRun(jobUid, token, (run) => run.row_count === made, `the webhook's step stored ${made} rows`);
    assert.equal(w.sim.job(jobUid).status, "running", "the API still says running");
    assert.equal(seen.status, "running", "not marked finished on the webhook's word");
    advance(1100); // the API says finished
    const end = await w.untilDone(jobUid, token);
    assert.equal(end.status, "finished");
    assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(100));
  },
);

test("a failure webhook while the API still says running does not end the run", async () => {
  const { jobUid } = w.sim.createJob({ rows: 50, durationMs: 1600, pageSize: 10, outcome: "shutdown", webhookLeadMs: 1200 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored");
  advance(500);
  await w.until(() => w.sim.webhooks().some((h) => h.jobUid === jobUid && h.event === "failed" && h.status === 202), "the early webhook");
  const made = w.sim.job(jobUid).rowsAvailable;
  const seen = await w.untilRun(jobUid, token, (run) => run.row_count === made, `the webhook's step stored ${made} rows`);
  assert.equal(seen.status, "running", "not ended on the webhook's word");
  advance(1100);
  const end = await w.untilDone(jobUid, token);
  assert.equal(end.status, "shutdown");
});

test("a run that ends \"completed\" is served as finished, with every row", async () => {
  const { jobUid } = w.sim.createJob({ rows: 30, durationMs: 200, pageSize: 10, outcome: "completed" });
  const token = await w.track(jobUid);
  advance(200);
  const end = await w.untilDone(jobUid, token);
  assert.equal(end.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(30));
});
