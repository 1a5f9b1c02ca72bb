// Issue 37 point 1, the worker's side of the wire contract: a run that ended with rows the worker
// knows are missing is served by GET /v3/jobs/{uid} (and the stream's end frame) as
//   status "shutdown", error_code "ROWS_MISSING" (lost batches) or "ROWS_CAP_REACHED" (the row cap),
//   error_message naming the batches (5, then "and N more"),
//   rows_missing { batches (all lost batch_uids, at most 100 listed), batch_count, count | null, run_status },
// and rows_missing is null for every other run. End to end in workerd against the v4 simulator.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { rowIds } from "./worker-fixture.mjs";
import { advance as advanceClock, launchV4, startV4Worker } from "./v4-fixture.mjs";
import { viewer } from "./stream-fixture.mjs";

let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startV4Worker({ clock, settings: { V4_STATUS_INTERVAL_MS: "200", V4_RECHECK_MS: "50" } });
});
after(() => w.close());

const advance = (ms, step) => advanceClock(w, clock, ms, step);
const untilEnded = (runUid, token) => w.untilRun(runUid, token, (run) => run.finish_time !== null, "the worker ended the run", { timeoutMs: 30000 });
const launched = async (spec) => {
  w.sim.v4.setDefaults(spec);
  const res = await launchV4(w, { inputs: [{}] });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { runUid: res.body.run_uid, token: res.body.read_token };
};
const CONTRACT_KEYS = ["batch_count", "batches", "count", "run_status"];

test("every replay lost: GET /jobs/{uid} serves shutdown, ROWS_MISSING, the batches named, rows_missing; the stream's end frame the same", async () => {
  // 7 batches (6 pages and the final one), every callback and every replay lost.
  const { runUid, token } = await launched({ rows: 60, pageSize: 10, durationMs: 2000, faults: { lostRate: 1, replayLostRate: 1 } });
  const v = viewer(w.origin, runUid, token);
  await v.opened;
  await advance(2000);
  const run = await untilEnded(runUid, token);
  const batches = w.sim.v4.run(runUid).batches.map((b) => b.batchUid);
  assert.equal(batches.length, 7);
  assert.equal(run.status, "shutdown", "never finished while rows are known missing");
  assert.equal(run.error_code, "ROWS_MISSING");
  assert.deepEqual(Object.keys(run.rows_missing).sort(), CONTRACT_KEYS);
  assert.deepEqual(run.rows_missing, { batches, batch_count: 7, count: null, run_status: "SUCCEEDED" });
  assert.equal(
    run.error_message,
    `The rows of 7 batches could not be recovered after 3 replays each (batch_uid ${batches.slice(0, 5).join(", ")} and 2 more) (ROWS_MISSING).`,
  );
  assert.equal(run.row_count, 0);
  console.log(`ROWS_MISSING run served: ${JSON.stringify({ status: run.status, error_code: run.error_code, rows_missing: run.rows_missing })}`);
  const end = await v.done;
  assert.equal(end.type, "end");
  assert.deepEqual(end.error, { code: "ROWS_MISSING", message: run.error_message, rows_missing: run.rows_missing });
  assert.equal(end.run.status, "shutdown");
  assert.deepEqual(end.run.rows_missing, run.rows_missing);
  w.sim.v4.setDefaults({});
});

test("a partial success with a batch lost: ROWS_MISSING, run_status PARTIAL_SUCCEEDED; the rows that came are served", async () => {
  // Seeded: some callbacks lost (and their replays), the others stored.
  const { runUid, token } = await launched({
    rows: 40,
    pageSize: 10,
    durationMs: 2000,
    outcome: "PARTIAL_SUCCEEDED",
    faults: { lostRate: 0.5, replayLostRate: 1 },
  });
  await advance(2000);
  const run = await untilEnded(runUid, token);
  const lost = w.sim.v4.deliveries(runUid).filter((d) => d.parent_uid === null && d.status === "FAILED").map((d) => d.batch_uid);
  assert.ok(lost.length > 0 && lost.length < 5, `${lost.length} batches lost (the seed's)`);
  assert.equal(run.status, "shutdown");
  assert.equal(run.error_code, "ROWS_MISSING");
  assert.deepEqual(run.rows_missing, { batches: lost, batch_count: lost.length, count: null, run_status: "PARTIAL_SUCCEEDED" });
  assert.equal((await w.rows(runUid, token)).length, run.row_count);
  w.sim.v4.setDefaults({});
});

test("the worker's row cap on a v4 run: shutdown, ROWS_CAP_REACHED, rows_missing with no batch named and no count", async () => {
  await w.restart({ MAX_ROWS_PER_RUN: "15" });
  const { runUid, token } = await launched({ rows: 30, pageSize: 10, durationMs: 3000 });
  await advance(3000);
  const run = await untilEnded(runUid, token);
  assert.deepEqual([run.status, run.error_code, run.row_count], ["shutdown", "ROWS_CAP_REACHED", 15]);
  assert.deepEqual(run.rows_missing, { batches: [], batch_count: 0, count: null, run_status: "RUNNING" });
  assert.deepEqual((await w.rows(runUid, token)).map((r) => r.id), rowIds(15));
  await w.restart({ MAX_ROWS_PER_RUN: "" });
  w.sim.v4.setDefaults({});
});

test("every other run has rows_missing null: one complete, one failed", async () => {
  const complete = await launched({ rows: 20, pageSize: 10, durationMs: 2000 });
  const failed = await launched({ rows: 10, pageSize: 10, durationMs: 2000, outcome: "FAILED" });
  await advance(2000);
  const a = await untilEnded(complete.runUid, complete.token);
  const b = await untilEnded(failed.runUid, failed.token);
  assert.deepEqual([a.status, a.error_code, a.rows_missing], ["finished", null, null]);
  assert.deepEqual([b.status, b.error_code, b.rows_missing], ["shutdown", "JOB_FAILED", null]);
  w.sim.v4.setDefaults({});
});
