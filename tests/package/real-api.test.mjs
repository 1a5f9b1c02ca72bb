// What the real Captain Data API does (DESIGN §1), through the package over HTTP against the
// simulator: webhooks are hints and never the proof of the end, every form of paging.next,
// `completed`, 404 on /results while pending, lagging counts, v4 error bodies, rate-limit
// headers, and scheduleWorkflow's codes when it is not retried.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobPoller, scheduleWorkflow } from "captaindata-poller";
import {
  assertCompleted,
  assertFailed,
  assertStopped,
  afterMicrotasks,
  assertSilentAfter,
  packageTimers,
  pollJob,
  recorder,
  requestsFor,
  rowIds,
  settle,
  until,
  useSim,
  waitForIdle,
} from "./sim-fixture.mjs";

const ctx = useSim();

// The bound (20 s) only fails a poller the success webhook left asleep for its hour.
test("a Created webhook changes nothing: no read at once, and the run is read to its real end", { timeout: 20_000 }, async () => {
  const HOUR = 3_600_000;
  const { jobUid } = ctx.sim.createJob({ rows: 200, durationMs: 600_000, pageSize: 1000 });
  const rec = recorder({ intervalMs: HOUR, maxDurationMs: 4 * HOUR });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const started = settle(poller.start());
  // Its first reads made, the poller sleeps for its hour (lengthened by up to 5 %).
  await waitForIdle(ctx.sim, jobUid, { minSleepMs: HOUR / 2 });
  const before = requestsFor(ctx.sim, jobUid).length;
  poller.webhookReceived({ job_uid: jobUid, message: "Job successfully created.", error: null });
  // Acted on, a webhook cuts the sleep and sends a read in the microtasks it starts (the success
  // webhook below does): once they have run, the hour's sleep is still the only timer.
  await afterMicrotasks();
  assert.equal(requestsFor(ctx.sim, jobUid).length, before, "the Created webhook made the poller read");
  const timers = packageTimers();
  assert.ok(timers.length === 1 && timers[0] >= HOUR / 2, `the Created webhook cut the hour's sleep (timers: ${timers} ms)`);
  // The control: the run ends, and its success webhook does make the poller read at once.
  ctx.sim.finish(jobUid);
  poller.webhookReceived({ job_uid: jobUid, message: "Job successfully finished.", error: null });
  const outcome = await started;
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(200), "every row, read to the real end");
});

test("a success webhook before the API says finished: polling goes on until it does, every row", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 300, durationMs: 300, pageSize: 1000 });
  // Without the webhook the next read is a minute away; after it, the status is read every
  // minDelayMs (at most 10 times) until the API says finished.
  const rec = recorder({ intervalMs: 60_000, retry: { retries: 5, minDelayMs: 40, maxDelayMs: 200 } });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const started = settle(poller.start());
  await waitForIdle(ctx.sim, jobUid);
  // The run is still going (the API says running); the webhook is early.
  poller.webhookReceived({ job_uid: jobUid, message: "Job successfully finished.", error: null });
  const outcome = await started;
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(300));
  assert.equal(outcome.value.status, "finished");
  const runReads = requestsFor(ctx.sim, jobUid).filter((e) => e.kind === "run");
  assert.ok(runReads.length >= 2, "the status was read again after the webhook");
  await assertSilentAfter(ctx.sim, jobUid);
});

test("after the short cadence, a run the API still calls running is polled at intervalMs again", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 50, durationMs: 60_000, pageSize: 1000 });
  const rec = recorder({ intervalMs: 60_000, retry: { retries: 5, minDelayMs: 10, maxDelayMs: 200 } });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const started = settle(poller.start());
  await waitForIdle(ctx.sim, jobUid);
  const before = requestsFor(ctx.sim, jobUid).length;
  poller.webhookReceived({ job_uid: jobUid, message: "Job successfully finished.", error: null });
  // The short cadence over, the poller sleeps a long interval again (its minute, or what is left of maxDurationMs).
  await waitForIdle(ctx.sim, jobUid, { since: before, minSleepMs: 5000 });
  const after = requestsFor(ctx.sim, jobUid).slice(before);
  const statusReads = after.filter((e) => e.kind === "run").length;
  assert.ok(statusReads >= 2 && statusReads <= 11, `${statusReads} status reads: short cadence, bounded`);
  poller.stop();
  assertStopped(await started, rec.seen);
});

test("a failure webhook is confirmed by the status: JOB_FAILED only once the API says stopped", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 100, durationMs: 60_000, pageSize: 1000 });
  const rec = recorder({ intervalMs: 60_000, retry: { retries: 5, minDelayMs: 40, maxDelayMs: 200 } });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const started = settle(poller.start());
  await waitForIdle(ctx.sim, jobUid);
  const before = requestsFor(ctx.sim, jobUid).length;
  const failed = { job_uid: jobUid, message: "Job failed.", error: "Integration error" };
  poller.webhookReceived(failed);
  // The webhook makes it read the status, which says running: the run is stopped the moment that
  // answer is made (before the poller has it), so only a later read can see "stopped".
  const statusReadsAfter = () => requestsFor(ctx.sim, jobUid).slice(before).filter((e) => e.kind === "run");
  await until(() => statusReadsAfter().some((e) => e.status === 200), { sim: ctx.sim, what: "a status read after the webhook" });
  ctx.sim.stop(jobUid);
  const outcome = await started;
  assertFailed(outcome, rec.seen, "JOB_FAILED");
  assert.equal(outcome.error.runStatus, "stopped");
  assert.ok(statusReadsAfter().length >= 2, "the running answer did not end it: the status was read again");
  assert.equal(rec.seen.statuses.at(-1).status, "stopped", "ended on the status that says so");
});

for (const nextForm of ["url", "path", "query", "page", "pageString"]) {
  for (const pageBase of [0, 1]) {
    test(`paging.next as ${nextForm}, pages counted from ${pageBase}: every row once`, async () => {
      const { jobUid } = ctx.sim.createJob({ rows: 180, durationMs: 0, pageSize: 50, nextForm, pageBase });
      const { rec, outcome } = await pollJob(ctx, jobUid);
      assertCompleted(outcome, rec.seen);
      assert.deepEqual(rec.ids(), rowIds(180));
      const results = requestsFor(ctx.sim, jobUid).filter((e) => e.kind === "results");
      assert.ok(results.length <= 8, `${results.length} results reads for 4 pages`);
    });
  }
}

test("`completed` (and statuses in capitals) end the run as a success", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 40, durationMs: 200, outcome: "completed", statusCase: "upper" });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(40));
  assert.match(outcome.value.status, /^completed$/i);
});

test("404 on /results while the run is pending: the run is read, polling goes on, every row", async () => {
  // Pending until the poller has met the 404 (a fixed startDelayMs could end first on a busy machine).
  const { jobUid } = ctx.sim.createJob({ rows: 60, durationMs: 300, startDelayMs: 600_000, resultsWhilePending: 404 });
  const polled = pollJob(ctx, jobUid);
  await until(() => requestsFor(ctx.sim, jobUid).some((e) => e.kind === "results" && e.status === 404), { sim: ctx.sim, what: "a 404 on /results" });
  ctx.sim.start(jobUid);
  const { rec, outcome } = await polled;
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(60));
  const log = requestsFor(ctx.sim, jobUid);
  assert.ok(log.some((e) => e.kind === "results" && e.status === 404), "the simulator did answer 404");
});

test("lagging counts and rows in bursts: nothing is lost because a count was stale", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 2400, durationMs: 600, pageSize: 1000, countLagMs: 200, arrival: { bursts: 4 } });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(2400));
});

test("a v4 error body names the problem through error_label", async () => {
  const server = await import("../../sim/server.mjs").then((m) => m.startSimServer({ apiKey: "right", errorShape: "v4" }));
  try {
    const rec = recorder();
    const poller = new JobPoller({ baseUrl: server.url, apiKey: "wrong", jobUid: "any", ...rec.options });
    const outcome = await settle(poller.start());
    assertFailed(outcome, rec.seen, "UNAUTHORIZED");
    assert.match(outcome.error.message, /^HTTP 401: \S/, "the body's text is in the message");
  } finally {
    await server.close();
  }
});

for (const rateLimitReset of ["delta", "epoch"]) {
  test(`429 with X-RateLimit-Reset (${rateLimitReset}) is honoured, clamped, every row once`, async () => {
    const script = [{ kind: "results", nth: 1, respond: 429, retryAfter: null, count: 2 }];
    const { jobUid } = ctx.sim.createJob({ rows: 30, durationMs: 0, faults: { rateLimitReset, script } });
    const { rec, outcome } = await pollJob(ctx, jobUid);
    assertCompleted(outcome, rec.seen);
    assert.deepEqual(rec.ids(), rowIds(30));
    assert.equal(outcome.value.retries >= 2, true);
  });
}

test("scheduleWorkflow is never retried and says what happened: a 429 is RATE_LIMITED", async () => {
  const server = await import("../../sim/server.mjs").then((m) =>
    m.startSimServer({ apiKey: "k", projectId: "p", defaults: { faults: {} } }),
  );
  try {
    // The simulator's schedule route answers 429 for this workflow (a rate-limit burst).
    const connection = { baseUrl: server.url, apiKey: "k", projectId: "p", fetch: rateLimited };
    const outcome = await settle(scheduleWorkflow(connection, "wf_1", { job_name: "x", steps: [], inputs: [{}] }));
    assert.equal(outcome.error?.code, "RATE_LIMITED", outcome.error?.message);
    assert.equal(outcome.error.status, 429);
    const refused = await settle(scheduleWorkflow({ ...connection, fetch: unreachable }, "wf_1", { job_name: "x", steps: [], inputs: [{}] }));
    assert.equal(refused.error?.code, "NETWORK_ERROR");
    assert.match(refused.error.message, /^no response at all/);
    assert.doesNotMatch(refused.error.message, /CORS/, "browser advice, not a server's");
    assert.equal(calls, 2, "one request each: nothing was retried");
  } finally {
    await server.close();
  }
});

let calls = 0;
async function rateLimited() {
  calls += 1;
  return new Response(JSON.stringify({ message: "wait before making additional requests" }), { status: 429 });
}
async function unreachable() {
  calls += 1;
  throw new TypeError("Failed to fetch");
}
