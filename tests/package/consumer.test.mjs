// The consumer's side: a failing onBatch or for-await body loses no batch (CALLBACK_FAILED,
// cursor before it, a resumed poller delivers it again), and stop() is not an error.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CaptainDataError, JobPoller } from "captaindata-poller";
import {
  FAST,
  afterMicrotasks,
  assertFailed,
  assertSilentAfter,
  assertStopped,
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

/** A run of three pages of 40 rows, all there: each read brings one page, one batch. */
const threePages = () => ctx.sim.createJob({ rows: 120, durationMs: 0, pageSize: 40 }).jobUid;

/** Polls `jobUid` from `cursor` to the end; returns the row ids delivered. */
async function resume(jobUid, cursor) {
  const rec = recorder();
  const outcome = await settle(new JobPoller({ ...ctx.connection, jobUid, cursor, ...rec.options }).start());
  assert.ok(!outcome.error, outcome.error?.message);
  return rec.ids();
}

test("onBatch rejecting on the 2nd batch: CALLBACK_FAILED, cursor before it; resuming delivers every row once", async () => {
  const jobUid = threePages();
  const failure = new Error("INSERT failed: disk full");
  const stored = [];
  let calls = 0;
  const rec = recorder({
    onBatch: async (batch) => {
      calls += 1;
      if (calls === 2) throw failure;
      stored.push(...batch.results.map((r) => r.id));
    },
  });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const outcome = await settle(poller.start());
  assertFailed(outcome, rec.seen, "CALLBACK_FAILED");
  assert.ok(outcome.error instanceof CaptainDataError);
  assert.equal(outcome.error.cause, failure, "cause is what onBatch threw");
  assert.deepEqual(stored, rowIds(40));
  assert.notEqual(poller.cursor, rec.seen.batches[1].cursor, "the cursor stays before the failed batch");
  assert.deepEqual(rec.seen.callbackErrors, [], "a failed batch ends the poll, it is not merely logged");
  await assertSilentAfter(ctx.sim, jobUid);

  stored.push(...(await resume(jobUid, poller.cursor)));
  assert.deepEqual(stored, rowIds(120), "every row exactly once overall");
});

test("a synchronous throw in onBatch ends the same way", async () => {
  const jobUid = threePages();
  const rec = recorder({
    onBatch: (batch) => {
      if (batch.offset > 0) throw new RangeError("bad row");
    },
  });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const outcome = await settle(poller.start());
  assertFailed(outcome, rec.seen, "CALLBACK_FAILED");
  assert.ok(outcome.error.cause instanceof RangeError);
  assert.deepEqual(await resume(jobUid, poller.cursor), rowIds(80, 40), "the failed batch comes again");
});

test("for await: a throwing body propagates its error, the cursor stays before that batch; resuming delivers every row once", async () => {
  const jobUid = threePages();
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...FAST });
  const stored = [];
  const failure = new Error("render failed");
  let taken = null;
  await assert.rejects(async () => {
    for await (const batch of poller) {
      if (batch.offset > 0) throw failure;
      stored.push(...batch.results.map((r) => r.id));
      taken = batch.cursor;
    }
  }, failure);
  const outcome = await settle(poller.start());
  assert.equal(outcome.value?.status, "stopped", "leaving the loop stops the poller, quietly");
  assert.ok(taken && poller.cursor !== undefined, "the batch the body threw on was not taken");
  await assertSilentAfter(ctx.sim, jobUid);

  stored.push(...(await resume(jobUid, poller.cursor)));
  assert.deepEqual(stored, rowIds(120));
});

test("iterator.throw(error) fails the batch it holds: CALLBACK_FAILED with that cause", async () => {
  const jobUid = threePages();
  const rec = recorder();
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options, onBatch: undefined });
  const iterator = poller[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(first.value.offset, 0);
  const failure = new Error("consumer gave up");
  await assert.rejects(iterator.throw(failure), failure);
  const outcome = await settle(poller.start());
  assert.equal(outcome.error?.code, "CALLBACK_FAILED");
  assert.equal(outcome.error.cause, failure);
  assert.equal(rec.seen.errors[0], outcome.error, "onError gets it");
  assert.deepEqual(await resume(jobUid, poller.cursor), rowIds(120), "nothing was taken");
});

test("stop(): start() resolves stopped with the cursor; no onError, no onComplete, nothing logged", async (t) => {
  const printed = [];
  for (const method of ["error", "warn", "log"]) t.mock.method(console, method, (...args) => printed.push(args));
  const { jobUid } = ctx.sim.createJob({ rows: 1000, durationMs: 60_000, pageSize: 100 });
  const rec = recorder({ intervalMs: 400 });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const started = settle(poller.start());
  await until(() => rec.seen.rows.length > 0, { sim: ctx.sim, what: "the first rows" });
  await waitForIdle(ctx.sim, jobUid);
  poller.stop();
  const outcome = await started;
  assertStopped(outcome, rec.seen);
  assert.equal(outcome.value.cursor, poller.cursor);
  assert.equal(outcome.value.totalResults, rec.seen.rows.length);
  assert.equal(outcome.value.requests, requestsFor(ctx.sim, jobUid).length);
  assert.strictEqual(poller.start(), poller.start(), "a poller runs once: start() again gives the same outcome");
  assert.deepEqual((await poller.start()).status, "stopped");
  assert.deepEqual(printed, [], "nothing logged");
  await assertSilentAfter(ctx.sim, jobUid);
});

test("stop() before start(): nothing is sent, start() resolves stopped", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10 });
  const rec = recorder();
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  poller.stop();
  assertStopped(await settle(poller.start()), rec.seen);
  await assertSilentAfter(ctx.sim, jobUid); // nothing armed, so nothing can be sent
  assert.equal(requestsFor(ctx.sim, jobUid).length, 0);
});

test("stop() while onBatch's promise is pending: the consumer finishes it; taken it counts, refused it comes again", async () => {
  for (const outcome of ["fulfils", "rejects"]) {
    const jobUid = threePages();
    let settleBatch = null;
    let handedOver;
    const inHand = new Promise((resolve) => (handedOver = resolve));
    const rec = recorder({
      onBatch: (batch) => {
        if (batch.offset === 0) return undefined;
        handedOver();
        return new Promise((resolve, reject) => (settleBatch = () => (outcome === "fulfils" ? resolve() : reject(new Error("no")))));
      },
    });
    const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
    let ended = false;
    const started = settle(poller.start()).finally(() => (ended = true));
    await inHand;
    const sent = requestsFor(ctx.sim, jobUid).length;
    poller.stop();
    // Nothing left for the poller to do but wait on the batch (no timer), and stop()'s microtasks have run.
    await until(() => packageTimers().length === 0, { sim: ctx.sim, what: "the stopped poller to wait on its batch" });
    await afterMicrotasks();
    assert.equal(ended, false, "start() waits for the batch in hand");
    settleBatch();
    const stopped = await started;
    assertStopped(stopped, rec.seen);
    assert.equal(requestsFor(ctx.sim, jobUid).length, sent, "nothing sent after stop()");
    const delivered = outcome === "fulfils" ? 80 : 40;
    assert.equal(stopped.value.totalResults, delivered, outcome);
    assert.deepEqual(await resume(jobUid, poller.cursor), rowIds(120 - delivered, delivered), outcome);
  }
});

test("an aborted signal: ABORTED, cause = its reason, the message every entry uses", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1000, durationMs: 60_000 });
  const aborter = new AbortController();
  const rec = recorder({ signal: aborter.signal, intervalMs: 400 });
  const started = settle(new JobPoller({ ...ctx.connection, jobUid, ...rec.options }).start());
  await waitForIdle(ctx.sim, jobUid);
  const reason = new Error("navigated away");
  aborter.abort(reason);
  const outcome = await started;
  assertFailed(outcome, rec.seen, "ABORTED");
  assert.ok(outcome.error instanceof CaptainDataError);
  assert.equal(outcome.error.cause, reason);
  assert.equal(outcome.error.message, "aborted by the AbortSignal");
});
