// The table of webhook forms (tests/webhook-forms.json) through the worker: it acts on what
// the package's one classifier says of the raw body (an end event steps the run now, Created
// and unknown ones are acknowledged and ignored) and hands the body on unchanged, so a
// failure's own text reaches the run's error message.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { startWorker } from "./worker-fixture.mjs";

const { forms } = JSON.parse(readFileSync(new URL("../webhook-forms.json", import.meta.url), "utf8"));
const withJob = (payload, jobUid) => ({ ...payload, job_uid: jobUid });

let w;
// The simulator's clock moves only when a test says so: the runs stay "running" at the API.
const clock = manualClock(Date.now());
before(async () => {
  // POLL_INTERVAL_MS 0: between webhooks only cron ticks step a run, so a step is the webhook's doing.
  // WEBHOOK_MIN_GAP_MS 0: these tests are about what a webhook means, not how often one may step a run.
  // webhook: null: the simulator sends none of its own (its Failed one, whose error is "Job
  // stopped", raced the test's and could be the one the step read); the tests send each form.
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", WEBHOOK_MIN_GAP_MS: "0" }, sim: { clock, webhook: null } });
});
after(() => w.close());

test("every form of the table: end events are accepted, the others ignored", async () => {
  const { jobUid } = w.sim.createJob({ rows: 20, durationMs: 60000, pageSize: 10 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored");
  for (const { name, kind, payload } of forms) {
    const res = await w.webhook(withJob(payload, jobUid));
    const acts = kind === "succeeded" || kind === "failed";
    assert.deepEqual([res.status, res.body.state], acts ? [202, "accepted"] : [200, "ignored"], name);
  }
});

test("a failure webhook's own text reaches the run's error when the API gives none", async () => {
  const { jobUid } = w.sim.createJob({ rows: 20, durationMs: 60000, pageSize: 10, outcome: "stopped" });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored");
  // The webhook must come before any step reads the end: a step still due (a failed one's retry
  // under load) would read "stopped" with no text and end the run before the webhook arrives.
  await w.untilNoStepDue(jobUid, "no step due before the end");
  w.sim.finish(jobUid, "stopped");
  const failure = forms.find((f) => f.kind === "failed" && f.error === "quota exceeded");
  const res = await w.webhook(withJob(failure.payload, jobUid));
  assert.equal(res.status, 202);
  const run = await w.untilDone(jobUid, token, { ticking: false, timeoutMs: 5000 });
  assert.equal(run.status, "stopped");
  assert.match(run.error_message, /quota exceeded/);
});
