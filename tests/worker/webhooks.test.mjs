// Webhooks are hints, never the proof of the end: Created and unknown events change nothing; an
// end event makes the run step now, and the run ends only when Captain Data's status says so.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { rowIds, startWorker, wait } from "./worker-fixture.mjs";

// Tests that pass only once pollStep({ webhook }) reads the status and drains instead of ending.

let w;
before(async () => {
  // POLL_INTERVAL_MS 0: between webhooks only cron ticks step a run, so a step is the webhook's doing.
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0" } });
});
after(() => w.close());

test("Created and unknown webhooks are acknowledged and change nothing; an end webhook steps at once", async () => {
  const { jobUid } = w.sim.createJob({ rows: 60, durationMs: 60000, pageSize: 10 });
  const token = await w.track(jobUid);
  await w.quiet(jobUid); // the first step is over
  const sent = w.sim.stats(jobUid).requests.total;
  for (const message of ["Job successfully created.", "JOB SUCCESSFULLY CREATED.", "Job was paused.", undefined]) {
    const res = await w.webhook({ job_uid: jobUid, message, error: null });
    assert.deepEqual([res.status, res.body.state], [200, "ignored"], String(message));
  }
  await wait(300); // several alarm turns: nothing may have been stepped
  assert.equal(w.sim.stats(jobUid).requests.total, sent, "no step was triggered");
  assert.equal((await w.run(jobUid, token)).body.status, "running");

  // The run really ends; its webhook, in capitals, is matched all the same and steps at once.
  w.sim.finish(jobUid);
  const end = await w.webhook({ job_uid: jobUid, message: "JOB SUCCESSFULLY FINISHED.", error: null });
  assert.deepEqual([end.status, end.body.state], [202, "accepted"]);
  const run = await w.untilDone(jobUid, token, { ticking: false, timeoutMs: 5000 });
  assert.equal(run.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(60));
});

test("statuses in capitals (FINISHED) end the run, served in lower case", async () => {
  const { jobUid } = w.sim.createJob({ rows: 40, durationMs: 300, pageSize: 10, statusCase: "upper" });
  const token = await w.track(jobUid);
  const run = await w.untilDone(jobUid, token);
  assert.equal(run.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(40));
});

test(
  "a success webhook that arrives before the API says finished: the run is not marked finished early, and ends with every row",
  async () => {
    // The simulator sends "Job successfully finished." 1.2 s before its status says so.
    const { jobUid } = w.sim.createJob({ rows: 100, durationMs: 1600, pageSize: 10, webhookLeadMs: 1200 });
    const token = await w.track(jobUid);
    await w.until(() => w.sim.webhooks().some((h) => h.jobUid === jobUid && h.event === "succeeded" && h.status === 202), "the early webhook");
    await w.quiet(jobUid, 100); // the step it caused is over
    assert.equal(w.sim.job(jobUid).status, "running", "the API still says running");
    assert.equal((await w.run(jobUid, token)).body.status, "running", "not marked finished on the webhook's word");
    const end = await w.untilDone(jobUid, token, { timeoutMs: 8000 });
    assert.equal(end.status, "finished");
    assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(100));
  },
);

test("a failure webhook while the API still says running does not end the run", async () => {
  const { jobUid } = w.sim.createJob({ rows: 50, durationMs: 1600, pageSize: 10, outcome: "shutdown", webhookLeadMs: 1200 });
  const token = await w.track(jobUid);
  await w.until(() => w.sim.webhooks().some((h) => h.jobUid === jobUid && h.event === "failed" && h.status === 202), "the early webhook");
  await w.quiet(jobUid, 100);
  assert.equal((await w.run(jobUid, token)).body.status, "running", "not ended on the webhook's word");
  const end = await w.untilDone(jobUid, token, { timeoutMs: 8000 });
  assert.equal(end.status, "shutdown");
});

test("a run that ends \"completed\" is served as finished, with every row", async () => {
  const { jobUid } = w.sim.createJob({ rows: 30, durationMs: 200, pageSize: 10, outcome: "completed" });
  const token = await w.track(jobUid);
  const end = await w.untilDone(jobUid, token, { timeoutMs: 5000 });
  assert.equal(end.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(30));
});
