// The cron path: ticks advance runs with pollStep within budgets; rows are stored once, in order.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { makeRow } from "../../sim/rows.js";
import { SECRETS, rowIds, startWorker } from "./worker-fixture.mjs";

let w;
before(async () => {
  // POLL_INTERVAL_MS 0: only ticks (and a step that used its whole budget) advance a run.
  // No webhook from the simulator here: runs must end through ticks (the last test sends its own).
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", SUBREQUEST_BUDGET: "50", ROW_KEY: "id" }, sim: { webhook: null } });
});
after(() => w.close());

test("rows accumulate across cron ticks and match the simulator exactly once", async () => {
  // A manual clock: the run has a known share of its rows at each tick, however slow the machine.
  const clock = manualClock(Date.now());
  const start = clock.now();
  const own = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", SUBREQUEST_BUDGET: "50", ROW_KEY: "id" }, sim: { webhook: null, clock } });
  try {
    const { jobUid } = own.sim.createJob({ rows: 120, durationMs: 4000, pageSize: 10 });
    const token = await own.track(jobUid);
    const counts = [];
    for (let t = 1000; t <= 4000; t += 1000) {
      clock.set(start + t);
      const made = own.sim.job(jobUid).rowsAvailable;
      await own.tick();
      // One tick's step reads everything there is (12 pages fit the budget of 50).
      const seen = await own.untilRun(jobUid, token, (run) => run.row_count === made, `the tick's step stored ${made} rows`);
      counts.push(seen.row_count);
    }
    const end = await own.untilDone(jobUid, token);
    assert.equal(end.status, "finished");
    assert.deepEqual(counts, [30, 60, 90, 120], "rows arrived over several ticks");
    const rows = await own.rows(jobUid, token);
    assert.deepEqual(rows.map((r) => r.id), rowIds(120));
    const fromApi = Array.from({ length: 120 }, (_, i) => makeRow(jobUid, i));
    assert.deepEqual(rows, fromApi, "rows are served exactly as the API gave them");
    own.assertOutboundClean();
  } finally {
    await own.close();
  }
});

test("every step stays within the subrequest budget; a step that used it continues at once", async () => {
  const tight = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", SUBREQUEST_BUDGET: "3" }, sim: { webhook: null } });
  try {
    const { jobUid } = tight.sim.createJob({ rows: 200, durationMs: 0, pageSize: 10 });
    const token = await tight.track(jobUid);
    // No tick: 20+ pages are read by steps that chain themselves, 3 requests each at most.
    const end = await tight.untilDone(jobUid, token, { ticking: false });
    assert.equal(end.status, "finished");
    const perStep = tight.requestsPerStep(jobUid);
    assert.ok(perStep.length >= 7, `steps: ${perStep}`);
    assert.ok(perStep.every((n) => n <= 3), `requests per step: ${perStep}`);
    assert.equal(perStep.reduce((a, b) => a + b), tight.sim.stats(jobUid).requests.total, "every request was a step's");
    assert.deepEqual((await tight.rows(jobUid, token)).map((r) => r.id), rowIds(200));
  } finally {
    await tight.close();
  }
});

test("429, 5xx and dropped connections only delay: every row once", async () => {
  const faults = { rate429: 0.2, retryAfter: 0, rate5xx: 0.2, dropRate: 0.05, duplicateRows: 2 };
  const { jobUid } = w.sim.createJob({ rows: 150, durationMs: 800, pageSize: 10, faults });
  const token = await w.track(jobUid);
  const end = await w.untilDone(jobUid, token);
  assert.equal(end.status, "finished");
  const statuses = w.sim.stats(jobUid).log.map((e) => e.status);
  assert.ok(statuses.includes(429) && statuses.some((s) => s >= 500), `faults happened: ${statuses}`);
  // ROW_KEY=id drops the rows the simulator repeats across pages.
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(150));
});

test("overlapping ticks and duplicate webhooks lose and duplicate nothing", async () => {
  const { jobUid } = w.sim.createJob({ rows: 300, durationMs: 1500, pageSize: 7, faults: { slowMs: 15 } });
  const token = await w.track(jobUid);
  for (let i = 0; i < 6; i++) {
    await Promise.all([w.tick(), w.tick(), w.tick()]);
    await w.until(() => w.sim.stats(jobUid).log.every((e) => e.status !== null), "the steps' requests answered");
  }
  w.sim.finish(jobUid);
  const payload = { job_uid: jobUid, message: "Job successfully finished.", error: false };
  const answers = await Promise.all([w.webhook(payload), w.tick(), w.webhook(payload), w.tick(), w.webhook(payload)]);
  for (const a of answers.filter(Boolean)) assert.ok([200, 202].includes(a.status), JSON.stringify(a.body));
  const end = await w.untilDone(jobUid, token, { ticking: false });
  assert.equal(end.status, "finished");
  await Promise.all([w.webhook(payload), w.tick()]);
  // Only the retention's alarm and nothing in flight: a step after the end would be one or the other.
  await w.untilNoStepDue(jobUid, "nothing stepped after the end");
  const rows = await w.rows(jobUid, token);
  assert.deepEqual(rows.map((r) => r.id), rowIds(300));
  assert.equal((await w.run(jobUid, token)).body.row_count, 300);
});

test("a step whose retries run out is resumed after its back-off, not given up", async () => {
  const flaky = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", RETRY_RETRIES: "0" }, sim: { webhook: null } });
  try {
    const { jobUid } = flaky.sim.createJob({ rows: 80, durationMs: 300, pageSize: 10, faults: { rate5xx: 0.3 } });
    const token = await flaky.track(jobUid);
    const end = await flaky.untilDone(jobUid, token);
    assert.equal(end.status, "finished");
    const statuses = flaky.sim.stats(jobUid).log.map((e) => e.status);
    assert.ok(statuses.filter((s) => s >= 500).length >= 2, `5xx answers: ${statuses}`);
    assert.deepEqual((await flaky.rows(jobUid, token)).map((r) => r.id), rowIds(80));
  } finally {
    await flaky.close();
  }
});

test("the back-off after a failed step is kept: cron ticks do not step the run earlier", async () => {
  const backoffMs = 1500;
  const slow = await startWorker({
    bindings: { POLL_INTERVAL_MS: "0", RETRY_RETRIES: "0", FAILED_STEP_BACKOFF_MS: String(backoffMs) },
    sim: { webhook: null },
  });
  try {
    const { jobUid } = slow.sim.createJob({ rows: 30, durationMs: 0, pageSize: 10, faults: { script: [{ kind: "any", nth: 1, respond: 503 }] } });
    const token = await slow.track(jobUid);
    await slow.until(() => slow.sim.stats(jobUid).log.some((e) => e.status === 503), "the failed first request");
    for (let i = 0; i < 5; i++) await slow.tick(); // each tick kicks the run
    const end = await slow.untilDone(jobUid, token);
    assert.equal(end.status, "finished");
    const [failed, next] = slow.sim.stats(jobUid).log;
    assert.equal(failed.status, 503);
    assert.ok(next.t - failed.t >= backoffMs - 50, `the next request came ${next.t - failed.t} ms after the failure`);
    assert.deepEqual((await slow.rows(jobUid, token)).map((r) => r.id), rowIds(30));
  } finally {
    await slow.close();
  }
});

test("tracking a run again steps it now, whatever its back-off", async () => {
  // A minute's back-off after a failed step (FAILED_STEP_BACKOFF_MS is capped at a minute).
  const slow = await startWorker({
    bindings: { POLL_INTERVAL_MS: "0", RETRY_RETRIES: "0", FAILED_STEP_BACKOFF_MS: "600000" },
    sim: { webhook: null },
  });
  try {
    const { jobUid } = slow.sim.createJob({ rows: 50, durationMs: 0, pageSize: 10 });
    slow.hooks.intercept = () => new Response(JSON.stringify({ message: "Service Unavailable" }), { status: 503 });
    const token = await slow.track(jobUid);
    // The failed step is committed (synchronising on the stored count, not asserting it).
    const ns = await slow.mf.getDurableObjectNamespace("RUNS");
    await slow.until(async () => (await ns.get(ns.idFromName(jobUid)).load())?.failed_steps === 1, "the failed step");
    slow.hooks.intercept = undefined; // the outage is over
    assert.deepEqual(await slow.rows(jobUid, token), [], "nothing stored yet");
    // The back-off's alarm: the step it would bring, were tracking again not to step now.
    const { alarm: backedOffTo } = await slow.runStorage(jobUid);
    const tracked = Date.now();
    assert.ok(backedOffTo - tracked > 30_000, `the failed step's back-off ends ${backedOffTo - tracked} ms from now`);
    const again = await slow.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` } });
    assert.deepEqual([again.status, again.body.created], [200, false]);
    const end = await slow.untilDone(jobUid, token, { ticking: false, timeoutMs: 30000 });
    assert.equal(end.status, "finished");
    const next = slow.sim.stats(jobUid).log.find((e) => e.t >= tracked);
    assert.ok(next && next.t < backedOffTo, `the next request ${next ? next.t - tracked : "none"} ms after tracking, before the back-off's end`);
    assert.deepEqual((await slow.rows(jobUid, token)).map((r) => r.id), rowIds(50));
  } finally {
    await slow.close();
  }
});

test("a run given up after MAX_FAILED_STEPS is resumed by tracking it again, and ends with every row", async () => {
  const flaky = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", RETRY_RETRIES: "0", MAX_FAILED_STEPS: "2" }, sim: { webhook: null } });
  try {
    const faults = { script: [{ kind: "any", nth: 1, respond: 503, count: 2 }] };
    const { jobUid } = flaky.sim.createJob({ rows: 30, durationMs: 0, pageSize: 10, faults });
    const token = await flaky.track(jobUid);
    const given = await flaky.untilDone(jobUid, token, { ticking: false });
    // Not "shutdown": a reader would end with JOB_FAILED for what was a passing outage.
    assert.equal(given.status, "paused");
    assert.match(given.error_message, /stopped polling this run \(RETRIES_EXHAUSTED\); tracking it again resumes it/);
    assert.equal(given.row_count, 0);
    const again = await flaky.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` } });
    assert.deepEqual([again.status, again.body.resumed], [200, true]);
    assert.equal((await flaky.run(jobUid, again.body.read_token)).status, 200, "the new token opens the run too");
    const end = await flaky.untilDone(jobUid, token, { ticking: false });
    assert.deepEqual([end.status, end.error_message], ["finished", null]);
    assert.deepEqual((await flaky.rows(jobUid, token)).map((r) => r.id), rowIds(30));
    // A run that ended well is not resumed: tracking it again changes nothing.
    const done = await flaky.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` } });
    assert.deepEqual([done.status, done.body.resumed], [200, false]);
  } finally {
    await flaky.close();
  }
});
