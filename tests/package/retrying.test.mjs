// Retries under way are visible: `onStatus` gets `run.retrying` (attempt, limit, delay, the last
// failure) when a retry is scheduled, and `retrying: null` at the next good answer, through the
// real path (the built package over HTTP to the simulator and its fault plan).
import assert from "node:assert/strict";
import { test } from "node:test";
import { API_KEY, PROJECT_ID, assertCompleted, pollJob, rowIds, useSim } from "./sim-fixture.mjs";

const ctx = useSim();

const retryingOf = (statuses) => statuses.map((run) => run.retrying);

/** No status told to the app carries a secret. */
function assertNoSecret(statuses) {
  const text = JSON.stringify(statuses);
  for (const secret of [API_KEY, PROJECT_ID]) assert.ok(!text.includes(secret), `${secret} in a status`);
}

test("a burst of 503s: retrying 1..n with the code and status, then null after recovery", async () => {
  const { jobUid } = ctx.sim.createJob({
    rows: 60,
    durationMs: 200,
    pageSize: 30,
    faults: { script: [{ kind: "any", nth: 1, respond: 503, count: 3 }] },
  });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertCompleted(outcome, rec.seen);
  assert.deepEqual(rec.ids(), rowIds(60), "every row once, in order");

  const statuses = rec.seen.statuses;
  const retries = retryingOf(statuses).filter(Boolean);
  assert.deepEqual(
    retries.map((r) => r.attempt),
    [1, 2, 3],
    "one status per scheduled retry, counting from 1",
  );
  for (const r of retries) {
    assert.equal(r.retries, 5, "the configured limit");
    assert.ok(Number.isFinite(r.delayMs) && r.delayMs > 0 && r.delayMs <= 50, `delayMs ${r.delayMs}`);
    assert.deepEqual(r.error, { code: "SERVER_ERROR", message: "HTTP 503", status: 503 });
    assert.ok(Object.isFrozen(r), "frozen like the status");
  }
  // The first request failed: nothing was read yet, so the status is unknown and its fields null.
  const first = statuses[0];
  assert.equal(first.status, "unknown");
  assert.equal(first.rowCount, null);
  assert.equal(first.retrying.attempt, 1);
  // Right after the third retry is scheduled, the next good answer says so: retrying null.
  const lastRetry = statuses.findLastIndex((run) => run.retrying);
  assert.equal(lastRetry, 2, "the three retries come first");
  assert.equal(statuses[3].retrying, null, "the recovery is told");
  assert.ok(statuses.every((run, i) => i <= lastRetry || run.retrying === null), "null from then on");
  assert.ok(statuses.every((run) => Object.isFrozen(run) && "retrying" in run));
  assert.ok(statuses.some((run) => run.status === "finished" && run.retrying === null));
  assertNoSecret(statuses);
});

test("429 is RATE_LIMITED; a status read before the retry stays in the retried status", async () => {
  const { jobUid } = ctx.sim.createJob({
    rows: 120,
    durationMs: 600,
    pageSize: 30,
    faults: { script: [{ kind: "results", nth: 4, respond: 429, retryAfter: 0, count: 2 }] },
  });
  const { rec, outcome } = await pollJob(ctx, jobUid);
  assertCompleted(outcome, rec.seen);
  const statuses = rec.seen.statuses;
  const at = statuses.findIndex((run) => run.retrying);
  assert.ok(at > 0, "a status was read before the 429s");
  assert.deepEqual(
    statuses.filter((run) => run.retrying).map((run) => [run.retrying.attempt, run.retrying.error.code, run.retrying.error.status]),
    [
      [1, "RATE_LIMITED", 429],
      [2, "RATE_LIMITED", 429],
    ],
  );
  // The retried status is the last one read, with its retry: an app keeps its counts on screen.
  const { retrying, ...rest } = statuses[at];
  const { retrying: before, ...read } = statuses[at - 1];
  assert.deepEqual(rest, read);
  assert.equal(before, null);
  assert.ok(statuses.slice(statuses.findLastIndex((run) => run.retrying) + 1).every((run) => run.retrying === null));
  assertNoSecret(statuses);
});

test("no response at all: NETWORK_ERROR without a status; retries exhausted end with that error", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10, durationMs: 0 });
  let calls = 0;
  const refused = async () => {
    calls += 1;
    throw new TypeError("fetch failed");
  };
  const { rec, outcome } = await pollJob(ctx, jobUid, { fetch: refused, retry: { retries: 2, minDelayMs: 5, maxDelayMs: 10 } });
  assert.equal(outcome.error?.code, "RETRIES_EXHAUSTED");
  assert.equal(calls, 3, "the first request and two retries");
  const retries = retryingOf(rec.seen.statuses);
  assert.deepEqual(
    retries.map((r) => r && [r.attempt, r.retries, r.error.code, "status" in r.error]),
    [
      [1, 2, "NETWORK_ERROR", false],
      [2, 2, "NETWORK_ERROR", false],
    ],
    "the last retry stays shown: no answer came",
  );
  assert.match(retries[0].error.message, /no response at all/);
  assert.ok(rec.seen.statuses.every((run) => run.status === "unknown"));
  assertNoSecret(rec.seen.statuses);
});
