// Transient faults are retried and invisible to the user: every row once, in order, one completion.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobPoller } from "captaindata-poller";
import {
  assertCompleted,
  assertFailed,
  assertSilentAfter,
  pollJob,
  recorder,
  requestsFor,
  rowIds,
  settle,
  startSim,
  useSim,
} from "./sim-fixture.mjs";

const ctx = useSim();

/** Polls a job with `faults` to its end; returns what the user saw and what the server got. */
async function pollThrough(spec, extra = {}) {
  const { jobUid } = ctx.sim.createJob({ rows: 120, durationMs: 200, pageSize: 30, ...spec });
  const { rec, outcome } = await pollJob(ctx, jobUid, extra);
  return { jobUid, rec, outcome, log: requestsFor(ctx.sim, jobUid) };
}

/** The request after each failed one asks for the same thing again (a retry, not a skip). */
function assertRetriedSamePath(log, status) {
  const failedAt = log.map((e, i) => (e.status === status ? i : -1)).filter((i) => i >= 0);
  assert.ok(failedAt.length > 0, `no ${status} seen`);
  for (const i of failedAt) {
    const retry = log.slice(i + 1).find((e) => e.kind === log[i].kind);
    assert.equal(retry?.path, log[i].path, `after ${status} on ${log[i].path}`);
  }
}

test("429 with Retry-After in seconds: retried, every row once", async () => {
  const { rec, outcome, log } = await pollThrough({
    faults: { script: [{ kind: "results", nth: 2, respond: 429, retryAfter: 1, count: 2 }] },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assertRetriedSamePath(log, 429);
  assert.ok(outcome.value.retries >= 2, `retries ${outcome.value.retries}`);
});

test("429 with Retry-After as an HTTP date: retried, every row once", async () => {
  const { rec, outcome, log } = await pollThrough({
    faults: {
      script: [
        { kind: "results", nth: 1, respond: 429, retryAfter: "date" },
        { kind: "run", nth: 1, respond: 429, retryAfter: "date" },
      ],
    },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assertRetriedSamePath(log, 429);
});

test("a huge Retry-After is clamped to maxDelayMs (no 32-bit overflow, no hot loop)", { timeout: 5000 }, async () => {
  const { rec, outcome, log } = await pollThrough({
    faults: { script: [{ kind: "results", nth: 1, respond: 429, retryAfter: 4294968 }] }, // > 2^32 ms
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assert.equal(log.filter((e) => e.status === 429).length, 1);
});

test("5xx bursts on every endpoint kind are retried", async () => {
  const { rec, outcome, log } = await pollThrough({
    faults: {
      script: [
        { kind: "any", nth: 2, respond: 503, count: 3 },
        { kind: "results", nth: 6, respond: 500, count: 2 },
        { kind: "any", nth: 12, respond: 502 },
      ],
    },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assert.ok(log.filter((e) => e.status >= 500).length >= 5);
  assertRetriedSamePath(log, 503);
});

test("persistent 5xx ends with RETRIES_EXHAUSTED after retries + 1 attempts", async () => {
  const { jobUid, rec, outcome, log } = await pollThrough(
    { faults: { script: [{ kind: "any", nth: 1, respond: 500, count: 100 }] } },
    { retry: { retries: 2, minDelayMs: 5, maxDelayMs: 20 } },
  );
  assertFailed(outcome, rec.seen, "RETRIES_EXHAUSTED");
  assert.equal(log.length, 3);
  assert.equal(outcome.error.status, 500);
  await assertSilentAfter(ctx.sim, jobUid);
});

test("dropped connections are retried", async () => {
  const { rec, outcome, log } = await pollThrough({
    faults: {
      script: [
        { kind: "results", nth: 1, respond: "drop", count: 2 },
        { kind: "run", nth: 1, respond: "drop" },
      ],
    },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assert.ok(log.filter((e) => e.error === "dropped").length >= 3);
});

test("malformed (truncated) JSON is retried, never delivered", async () => {
  const { rec, outcome, log } = await pollThrough({
    faults: {
      script: [
        { kind: "results", nth: 2, respond: "malformed", count: 2 },
        { kind: "run", nth: 1, respond: "malformed" },
      ],
    },
  });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assert.ok(log.length >= 4);
});

test("flapping and unknown statuses (queued) never end the poll early", async () => {
  const { rec, outcome } = await pollThrough({ durationMs: 400, faults: { flapStatus: true } });
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(120));
  assert.equal(outcome.value.status, "finished");
});

for (const seed of [1, 2, 3]) {
  test(
    `random fault soak (seed ${seed}): every row exactly once, in order, one completion`,
    { timeout: 15000 },
    async () => {
      const { server } = await startSim({ seed });
      try {
        const { jobUid } = server.sim.createJob({
          rows: 300,
          durationMs: 400,
          pageSize: 25,
          faults: {
            rate429: 0.1,
            retryAfter: 0,
            rate5xx: 0.1,
            dropRate: 0.05,
            malformedRate: 0.05,
            flapStatus: true,
            duplicateRows: 3,
          },
        });
        const rec = recorder({ rowKey: "id", retry: { retries: 12, minDelayMs: 2, maxDelayMs: 20 } });
        const outcome = await settle(
          new JobPoller({ ...ctx.connection, baseUrl: server.url, jobUid, ...rec.options }).start(),
        );
        assertCompleted(outcome, rec.seen);
        assert.deepEqual(rec.ids(), rowIds(300));
        await assertSilentAfter(server.sim, jobUid);
      } finally {
        await server.close();
      }
    },
  );
}
