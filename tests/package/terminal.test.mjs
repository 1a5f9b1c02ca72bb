// Permanent errors and stop conditions: one terminal error with a stable code, and silence after it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobPoller } from "captaindata-poller";
import {
  assertFailed,
  assertStopped,
  assertSilentAfter,
  pollJob,
  recorder,
  requestsFor,
  rowIds,
  sendCounter,
  settle,
  until,
  useSim,
  waitForIdle,
} from "./sim-fixture.mjs";

const ctx = useSim();

test("All Inputs Failed from the results endpoint: ALL_INPUTS_FAILED, zero requests after it is seen", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 50, durationMs: 0, outcome: "allInputsFailed" });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertFailed(outcome, rec.seen, "ALL_INPUTS_FAILED");
  // The run had ended before the first request: whatever the first read was, it showed the failure.
  assert.equal(requestsFor(ctx.sim, jobUid).length, 1, "requests after All Inputs Failed was seen");
  await assertSilentAfter(ctx.sim, jobUid);
});

test("All Inputs Failed noticed from the run's error_message after running", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 50, durationMs: 150, outcome: "allInputsFailed" });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertFailed(outcome, rec.seen, "ALL_INPUTS_FAILED");
  assert.deepEqual(rec.seen.rows, []);
  const log = requestsFor(ctx.sim, jobUid);
  // Every read at or after the end shows the failure (run error_message or results 400).
  const firstSign = log.findIndex((e) => e.t >= ctx.sim.job(jobUid).endsAt);
  assert.ok(firstSign >= 0);
  assert.equal(
    firstSign,
    log.length - 1,
    `requests after All Inputs Failed was seen: ${JSON.stringify(log.slice(firstSign + 1))}`,
  );
  await assertSilentAfter(ctx.sim, jobUid);
});

test("a run that ends shutdown: rows delivered so far, then JOB_FAILED", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 60, durationMs: 150, pageSize: 20, outcome: "shutdown" });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertFailed(outcome, rec.seen, "JOB_FAILED");
  assert.equal(outcome.error.runStatus, "shutdown");
  assert.deepEqual(rec.ids(), rowIds(60));
  await assertSilentAfter(ctx.sim, jobUid);
});

test("wrong API key: UNAUTHORIZED after one request, never retried", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10 });
  const { rec, outcome } = await pollJob(ctx, jobUid, { apiKey: "wrong-key" });
  assertFailed(outcome, rec.seen, "UNAUTHORIZED");
  assert.equal(outcome.error.status, 401);
  assert.equal(requestsFor(ctx.sim, jobUid).length, 1);
  await assertSilentAfter(ctx.sim, jobUid);
});

test("wrong project (403): UNAUTHORIZED after one request", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10 });
  const { rec, outcome } = await pollJob(ctx, jobUid, { projectId: "someone-elses" });
  assertFailed(outcome, rec.seen, "UNAUTHORIZED");
  assert.equal(outcome.error.status, 403);
  assert.equal(requestsFor(ctx.sim, jobUid).length, 1);
});

test("unknown job: NOT_FOUND from the run's own 404, nothing read after it", async () => {
  const { rec, outcome } = await pollJob(ctx, "job-that-does-not-exist");
  assertFailed(outcome, rec.seen, "NOT_FOUND");
  assert.equal(outcome.error.status, 404);
  assert.deepEqual(requestsFor(ctx.sim, "job-that-does-not-exist").map((e) => e.kind), ["run"]);
});

test("maxDurationMs: TIMEOUT on a run that never ends in time, then silence", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10000, durationMs: 60000 });
  // The last request before the deadline is aborted by it: the simulator may log it after the
  // outcome, so what the package sends is counted where it sends it.
  const counter = sendCounter();
  const { rec, outcome } = await pollJob(ctx, jobUid, { maxDurationMs: 250, fetch: counter.fetch });
  assertFailed(outcome, rec.seen, "TIMEOUT");
  assert.ok(rec.seen.rows.length > 0, "rows seen before the timeout were delivered");
  assert.ok(counter.sent.length > 0 && counter.sent.every((url) => url.includes(jobUid)), "every request went through the injected fetch");
  await assertSilentAfter(ctx.sim, jobUid, { sent: counter.sent });
});

test("maxRequests: BUDGET_EXHAUSTED with exactly maxRequests requests sent", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1000, durationMs: 60000 });
  const { rec, outcome } = await pollJob(ctx, jobUid, { maxRequests: 4 });
  assertFailed(outcome, rec.seen, "BUDGET_EXHAUSTED");
  assert.equal(requestsFor(ctx.sim, jobUid).length, 4);
  await assertSilentAfter(ctx.sim, jobUid);
});

test("abort during the sleep between polls: ABORTED with the signal's reason, no request after", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1000, durationMs: 60000 });
  const aborter = new AbortController();
  const rec = recorder({ intervalMs: 400, signal: aborter.signal });
  const started = settle(new JobPoller({ ...ctx.connection, jobUid, ...rec.options }).start());
  await waitForIdle(ctx.sim, jobUid); // now sleeping until the next poll
  const sent = requestsFor(ctx.sim, jobUid).length;
  const reason = new Error("user navigated away");
  aborter.abort(reason);
  const outcome = await started;
  assertFailed(outcome, rec.seen, "ABORTED");
  assert.equal(outcome.error.cause, reason);
  assert.equal(requestsFor(ctx.sim, jobUid).length, sent, "a request went out after abort");
  await assertSilentAfter(ctx.sim, jobUid); // its sleep is gone: nothing left that could poll again
});

test("stop() during the sleep: start() resolves stopped, no onError, idempotent, no request after", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1000, durationMs: 60000 });
  const rec = recorder({ intervalMs: 400 });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const started = settle(poller.start());
  await waitForIdle(ctx.sim, jobUid);
  const sent = requestsFor(ctx.sim, jobUid).length;
  poller.stop();
  poller.stop();
  const outcome = await started;
  assertStopped(outcome, rec.seen);
  assert.equal(outcome.value.cursor, poller.cursor);
  assert.equal(outcome.value.requests, sent);
  assert.equal(requestsFor(ctx.sim, jobUid).length, sent);
  await assertSilentAfter(ctx.sim, jobUid); // its sleep is gone: nothing left that could poll again
});

test("abort during a slow request: the request is cancelled, ABORTED, nothing sent after", async () => {
  const { jobUid } = ctx.sim.createJob({
    rows: 100,
    durationMs: 60000,
    faults: { script: [{ kind: "any", nth: 1, respond: "slow", ms: 30000 }] },
  });
  const aborter = new AbortController();
  const rec = recorder({ signal: aborter.signal });
  const started = settle(new JobPoller({ ...ctx.connection, jobUid, ...rec.options }).start());
  // The first request has reached the simulator, which holds it (30 s) before answering.
  await until(() => requestsFor(ctx.sim, jobUid).length > 0, { sim: ctx.sim, what: "the slow request" });
  aborter.abort();
  const outcome = await started;
  assertFailed(outcome, rec.seen, "ABORTED");
  // The simulator has seen the connection close (the request ends "aborted", not answered).
  await until(() => requestsFor(ctx.sim, jobUid).every((e) => e.status !== null), { sim: ctx.sim, what: "the simulator to see the abort" });
  const log = requestsFor(ctx.sim, jobUid);
  assert.deepEqual(
    log.map((e) => e.error ?? e.status),
    ["aborted"],
    "the in-flight request was cancelled and nothing followed",
  );
  await assertSilentAfter(ctx.sim, jobUid);
});

test("a signal already aborted: start() rejects ABORTED without any request", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10 });
  const { rec, outcome } = await pollJob(ctx, jobUid, { signal: AbortSignal.abort() });
  assertFailed(outcome, rec.seen, "ABORTED");
  assert.equal(requestsFor(ctx.sim, jobUid).length, 0);
});
