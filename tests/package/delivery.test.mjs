// Rows reach the user early, in order, exactly once: over time, across pages, across a resume.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobPoller } from "captaindata-poller";
import {
  FAST,
  assertCompleted,
  assertSilentAfter,
  pollJob,
  recorder,
  requestsFor,
  rowIds,
  packageTimers,
  settle,
  until,
  useSim,
  waitForIdle,
} from "./sim-fixture.mjs";

const ctx = useSim();

test("happy path: rows arrive while the run is going, then completion with every row once", async () => {
  const { sim } = ctx;
  // A run far longer than the test: it ends on the test's command once the first rows are
  // delivered (then all 300 rows exist), however late a busy machine delivers them.
  const { jobUid } = sim.createJob({ rows: 300, durationMs: 60_000, pageSize: 50 });
  const statusAtFirstBatch = [];
  const { rec, outcome } = await pollJob(ctx, jobUid, {
    onBatch: () => {
      if (statusAtFirstBatch.length > 0) return;
      statusAtFirstBatch.push(sim.job(jobUid).status);
      sim.finish(jobUid);
    },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(300));
  assert.equal(statusAtFirstBatch[0], "running", "first rows delivered before the run ended");
  assert.ok(rec.seen.batches.length > 1, "several batches over time");
  assert.equal(outcome.value.status, "finished");
  assert.equal(outcome.value.totalResults, 300);
  assert.equal(outcome.value.requests, requestsFor(sim, jobUid).length, "summary counts the requests the server saw");
  // offsets are contiguous and batches are frozen
  let offset = 0;
  for (const batch of rec.seen.batches) {
    assert.equal(batch.offset, offset);
    assert.ok(Object.isFrozen(batch));
    assert.equal(typeof batch.cursor, "string");
    offset += batch.results.length;
  }
  assert.ok(rec.seen.statuses.some((s) => s.status === "running"));
  assert.equal(rec.seen.statuses.at(-1).status, "finished");
  await assertSilentAfter(sim, jobUid);
});

test("pagination: a finished run of several pages is read by following next, each page about once", async () => {
  const { sim } = ctx;
  const { jobUid } = sim.createJob({ rows: 230, durationMs: 0, pageSize: 20 });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(230));
  const results = requestsFor(sim, jobUid).filter((e) => e.kind === "results");
  const pagesRead = new Set(results.map((e) => e.path));
  assert.equal(pagesRead.size, 12, "pages 1..12 read");
  assert.ok(results.length <= 12 + 2, `results requests: ${results.length} for 12 pages`);
});

test("a growing last page is re-read without re-delivering its rows", async () => {
  const { sim } = ctx;
  const { jobUid } = sim.createJob({ rows: 40, durationMs: 600, pageSize: 100 });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(40));
  assert.ok(rec.seen.batches.length > 1, "the single page grew over several reads");
});

test("resume from a cursor taken mid-page: the union of both pollers is every row exactly once", async () => {
  const { sim, connection } = ctx;
  // A long run (3 rows a second): the first poller's batches are a few rows, never a full page,
  // however busy the machine; the run is finished on command before the second poller.
  const { jobUid } = sim.createJob({ rows: 200, durationMs: 60_000, pageSize: 50 });
  let first;
  const recA = recorder({
    onBatch: () => {
      if (recA.seen.rows.length % 50 !== 0) first.stop();
    },
  });
  first = new JobPoller({ ...connection, jobUid, ...recA.options });
  const outcomeA = await settle(first.start());
  assert.equal(outcomeA.value?.status, "stopped", "stop() resolves start() with a stopped summary");
  assert.deepEqual(recA.seen.errors, [], "stop() is not an error");
  const delivered = recA.seen.rows.length;
  assert.ok(delivered % 50 !== 0 && delivered < 200, `stopped mid-page after ${delivered} rows`);
  const cursor = first.cursor;
  assert.equal(typeof cursor, "string");
  assert.equal(cursor, recA.seen.batches.at(-1).cursor, "poller.cursor is the last batch's cursor");
  assert.doesNotThrow(() => JSON.stringify(cursor));

  sim.finish(jobUid);
  const recB = recorder();
  const outcomeB = await settle(new JobPoller({ ...connection, jobUid, cursor, ...recB.options }).start());
  assertCompleted(outcomeB, recB.seen);
  assert.equal(recB.seen.batches[0].offset, delivered, "resumes where the first poller stopped");
  assert.deepEqual([...recA.ids(), ...recB.ids()], rowIds(200));
});

test("duplicate rows across pages (overlapping pages) are dropped with rowKey", async () => {
  const { sim } = ctx;
  const { jobUid } = sim.createJob({ rows: 120, durationMs: 300, pageSize: 25, faults: { duplicateRows: 4 } });
  const { rec, outcome } = await pollJob(ctx, jobUid, { rowKey: "id" });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
});

test(
  "webhook relay: webhookReceived makes one final read and completes without waiting for the next poll",
  { timeout: 5000 },
  async () => {
    const { sim, connection } = ctx;
    const { jobUid } = sim.createJob({ rows: 100, durationMs: 60000, pageSize: 50 });
    const rec = recorder({ intervalMs: 60000 }); // without the webhook, the next read is a minute away
    const poller = new JobPoller({ ...connection, jobUid, ...rec.options });
    const started = settle(poller.start());
    await waitForIdle(sim, jobUid); // it has read and sleeps (a minute)
    sim.finish(jobUid);
    const requestsAtWebhook = requestsFor(sim, jobUid).length;
    poller.webhookReceived({ job_uid: jobUid, message: "Job successfully finished.", error: false });
    const outcome = await started;
    assertCompleted(outcome, rec.seen);
    assert.deepEqual(rec.ids(), rowIds(100));
    const afterHook = requestsFor(sim, jobUid).length - requestsAtWebhook;
    assert.ok(afterHook >= 1 && afterHook <= 4, `requests after the webhook: ${afterHook}`);
    assert.equal(outcome.value.status, "finished");
    await assertSilentAfter(sim, jobUid);
  },
);

test("a failed-job webhook ends with JOB_FAILED", async () => {
  const { sim, connection } = ctx;
  const { jobUid } = sim.createJob({ rows: 10, durationMs: 60000 });
  const rec = recorder({ intervalMs: 60000 });
  const poller = new JobPoller({ ...connection, jobUid, ...rec.options });
  const started = settle(poller.start());
  await waitForIdle(sim, jobUid); // it has read and sleeps (a minute)
  sim.stop(jobUid);
  poller.webhookReceived({ job_uid: jobUid, message: "Job failed.", error: true });
  const outcome = await started;
  assert.equal(outcome.error?.code, "JOB_FAILED");
  await assertSilentAfter(sim, jobUid);
});

test("webhookReceived for another job is refused with a TypeError", () => {
  const poller = new JobPoller({ ...ctx.connection, jobUid: "job-a", ...recorder().options });
  assert.throws(() => poller.webhookReceived({ job_uid: "job-b", message: "Job successfully finished." }), TypeError);
  poller.stop();
});

test("a throwing onStatus is reported, polling continues, every row is delivered", async () => {
  const { sim } = ctx;
  const { jobUid } = sim.createJob({ rows: 150, durationMs: 300, pageSize: 50 });
  let calls = 0;
  const { rec, outcome } = await pollJob(ctx, jobUid, {
    onStatus: () => {
      calls += 1;
      if (calls <= 2) throw new Error(`boom ${calls}`);
    },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(150));
  assert.deepEqual(
    rec.seen.callbackErrors.map((c) => [c.error.message, c.name]),
    [
      ["boom 1", "onStatus"],
      ["boom 2", "onStatus"],
    ],
  );
});

test("async onBatch: backpressure — no request while the returned promise is pending", async () => {
  const { sim } = ctx;
  const { jobUid } = sim.createJob({ rows: 120, durationMs: 200, pageSize: 40 });
  const violations = [];
  const { rec, outcome } = await pollJob(ctx, jobUid, {
    onBatch: async () => {
      const before = requestsFor(sim, jobUid).length;
      // While this promise is pending a poller that honours it holds no timer (no sleep, no
      // request: it waits on us). One that ignored it would sleep 30 ms and read: never quiet.
      await until(() => packageTimers().length === 0, { sim, timeoutMs: 10000, what: "the poller to wait on onBatch" });
      const afterwards = requestsFor(sim, jobUid).length;
      if (afterwards !== before) violations.push(afterwards - before);
    },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assert.deepEqual(violations, [], "requests sent while onBatch's promise was pending");
});

test("async iteration yields the same batches in order and ends on completion", async () => {
  const { sim, connection } = ctx;
  const { jobUid } = sim.createJob({ rows: 90, durationMs: 200, pageSize: 30 });
  const poller = new JobPoller({ ...connection, jobUid, ...FAST });
  const ids = [];
  for await (const batch of poller) {
    assert.equal(batch.offset, ids.length);
    ids.push(...batch.results.map((r) => r.id));
  }
  assert.deepEqual(ids, rowIds(90));
  const summary = await poller.start();
  assert.equal(summary.totalResults, 90);
});

test("breaking out of for await stops the poller: no request afterwards", async () => {
  const { sim, connection } = ctx;
  const { jobUid } = sim.createJob({ rows: 500, durationMs: 5000, pageSize: 50 });
  const poller = new JobPoller({ ...connection, jobUid, ...FAST });
  for await (const batch of poller) {
    assert.ok(batch.results.length > 0);
    break;
  }
  const outcome = await settle(poller.start());
  assert.equal(outcome.value?.status, "stopped");
  await assertSilentAfter(sim, jobUid);
});

test("async iteration throws the terminal error", async () => {
  const { connection } = ctx;
  const poller = new JobPoller({ ...connection, jobUid: "no-such-job", intervalMs: 30 });
  await assert.rejects(
    async () => {
      for await (const _ of poller); // eslint-disable-line no-unused-vars
    },
    { code: "NOT_FOUND" },
  );
});
