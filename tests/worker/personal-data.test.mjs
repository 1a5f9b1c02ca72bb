// The rows are personal data (scraped profiles): the worker deletes a run RETENTION_DAYS after it
// ends (its Durable Object's storage emptied, alarm included, and its registry entry gone), at
// once on DELETE, and keeps no more than MAX_ROWS_PER_RUN rows per run and MAX_TRACKED_RUNS runs,
// each cap with a named error, never dropping anything silently.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { SECRETS, rowIds, startWorker } from "./worker-fixture.mjs";

const ADMIN = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
const DAY_MS = 86_400_000;

/** What a run's Durable Object holds: its tables, rows and alarm. */
const stored = (w, jobUid) => w.runStorage(jobUid);

/** The registry's runs (active and retired): every run it lists counts towards MAX_TRACKED_RUNS. */
async function listed(w) {
  const stats = await w.registryStats();
  return stats.active + stats.retired;
}

let w;
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", MAX_ROWS_PER_RUN: "25" }, sim: { webhook: null } });
});
after(() => w.close());

test("an ended run's deletion is set RETENTION_DAYS (default 30) after its end, on its alarm", async () => {
  const { jobUid } = w.sim.createJob({ rows: 20, durationMs: 0, pageSize: 10 });
  const token = await w.track(jobUid);
  const before = Date.now();
  await w.untilDone(jobUid, token);
  const { rows, alarm } = await stored(w, jobUid);
  assert.equal(rows, 20);
  const ns = await w.mf.getDurableObjectNamespace("RUNS");
  const { finished_at: finishedAt } = await ns.get(ns.idFromName(jobUid)).load();
  assert.ok(finishedAt >= before - 1000, "ended during this test");
  assert.equal(alarm, finishedAt + 30 * DAY_MS, "the alarm is the deletion, 30 days after the end");
});

test("RETENTION_DAYS after the end, the run is gone: storage empty (no alarm left), registry entry removed, reads 404", async () => {
  // 0.00003 days = 2.6 s: long enough to read the run first, short enough to wait for.
  const short = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", RETENTION_DAYS: "0.00003" }, sim: { webhook: null } });
  try {
    const { jobUid } = short.sim.createJob({ rows: 30, durationMs: 0, pageSize: 10 });
    const token = await short.track(jobUid);
    await short.untilDone(jobUid, token);
    assert.deepEqual((await short.rows(jobUid, token)).map((r) => r.id), rowIds(30), "served until the retention ends");
    assert.equal(await listed(short), 1);
    const gone = await short.until(async () => {
      const data = await stored(short, jobUid);
      return data.tables.length === 0 && data;
    }, "the run's storage to be deleted");
    assert.deepEqual(gone, { tables: [], rows: 0, alarm: null });
    assert.equal(await listed(short), 0, "the registry forgot it");
    for (const path of [`/v3/jobs/${jobUid}`, `/v3/jobs/${jobUid}/results`]) {
      const res = await short.call(path, { headers: { "x-read-token": token } });
      assert.equal(res.status, 404, path);
    }
    assert.deepEqual(await stored(short, jobUid), gone, "reading a deleted run stores nothing again");
    assert.ok(short.logs.some((line) => line.includes(`run ${jobUid} deleted`)), "the deletion is logged");
  } finally {
    await short.close();
  }
});

test("DELETE /v3/jobs/{uid} (admin) deletes a run at once, even while it is polled", async () => {
  const { jobUid } = w.sim.createJob({ rows: 60, durationMs: 60000, pageSize: 10 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored");
  assert.deepEqual((await stored(w, jobUid)).tables, ["rows", "run"]);
  assert.equal((await w.call(`/v3/jobs/${jobUid}`, { method: "DELETE" })).status, 401, "admin only");
  assert.equal((await w.call(`/v3/jobs/${jobUid}`, { method: "DELETE", headers: { "x-read-token": token } })).status, 401, "a read token is not enough");
  const before = await listed(w);
  const res = await w.call(`/v3/jobs/${jobUid}`, { method: "DELETE", headers: ADMIN });
  assert.deepEqual([res.status, res.body], [200, { job_uid: jobUid, deleted: true }]);
  assert.deepEqual(await stored(w, jobUid), { tables: [], rows: 0, alarm: null });
  assert.equal(await listed(w), before - 1);
  assert.equal((await w.run(jobUid, token)).status, 404);
  await w.tick(); // a sweep after the delete finds nothing to step
  assert.deepEqual(await stored(w, jobUid), { tables: [], rows: 0, alarm: null });
  const again = await w.call(`/v3/jobs/${jobUid}`, { method: "DELETE", headers: ADMIN });
  assert.equal(again.status, 404, "nothing left to delete");
  // Tracked again, it starts from nothing: the old token does not open the new copy.
  const fresh = await w.track(jobUid);
  assert.equal((await w.run(jobUid, token)).status, 403);
  assert.equal((await w.run(jobUid, fresh)).status, 200);
});

test("MAX_ROWS_PER_RUN: the first rows are kept and served, the run ends with ROWS_CAP_REACHED, and a JobPoller says so", async () => {
  const { jobUid } = w.sim.createJob({ rows: 40, durationMs: 0, pageSize: 10 });
  const token = await w.track(jobUid);
  const end = await w.untilDone(jobUid, token);
  assert.equal(end.status, "shutdown");
  assert.equal(end.error_code, "ROWS_CAP_REACHED");
  assert.equal(end.row_count, 25);
  assert.match(end.error_message, /at most 25 rows of a run \(MAX_ROWS_PER_RUN\): it stored the first 25 and no more \(ROWS_CAP_REACHED\)/);
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(25), "the first 25 rows, in order");

  // A reader through the worker gets the stored rows, then an incomplete end (not a success).
  assert.deepEqual(end.rows_missing, { batches: [], batch_count: 0, count: null, run_status: end.rows_missing?.run_status });
  const seen = [];
  const poller = new JobPoller({
    jobUid,
    baseUrl: `${w.origin}/v3`,
    headers: { "x-read-token": token },
    intervalMs: 20,
    retry: { retries: 2, minDelayMs: 5, maxDelayMs: 20 },
    maxDurationMs: 20000,
    onBatch: (batch) => void seen.push(...batch.results),
  });
  const summary = await poller.start();
  assert.equal(summary.status, "incomplete");
  assert.equal(summary.missing.code, "ROWS_CAP_REACHED");
  assert.deepEqual(seen.map((r) => r.id), rowIds(25));

  // Tracking it again does not resume it past the cap.
  const again = await w.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: ADMIN });
  assert.deepEqual([again.status, again.body.resumed], [200, false]);
  assert.equal((await w.run(jobUid, token)).body.row_count, 25);
});

test("MAX_TRACKED_RUNS: a new run is refused with TRACKED_RUNS_CAP_REACHED (tracked or launched), a tracked one is not", async () => {
  const capped = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", MAX_TRACKED_RUNS: "2" }, sim: { webhook: null } });
  try {
    const [a, b, c] = [0, 1, 2].map(() => capped.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 }).jobUid);
    await capped.track(a);
    await capped.track(b);
    const refused = await capped.call(`/v3/jobs/${c}/track`, { method: "POST", headers: ADMIN });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.code, "TRACKED_RUNS_CAP_REACHED");
    assert.match(refused.body.message, /at most 2 runs \(MAX_TRACKED_RUNS\)/);
    assert.equal(refused.body.read_token, undefined);
    assert.equal(capped.sim.stats(c).requests.total, 0, "the refused run is never polled");
    assert.equal((await capped.call(`/v3/jobs/${a}/track`, { method: "POST", headers: ADMIN })).status, 200, "a tracked run can be tracked again");

    const launches = () => capped.outbound.filter((r) => r.url.endsWith("/schedule")).length;
    const launchedBefore = launches();
    const launch = await capped.schedule("wf-1", { job_name: "x", steps: [], inputs: [{ url: "a" }] });
    assert.deepEqual([launch.status, launch.body.code], [409, "TRACKED_RUNS_CAP_REACHED"]);
    assert.equal(launches(), launchedBefore, "nothing was launched in Captain Data");

    // Deleting a run makes room.
    assert.equal((await capped.call(`/v3/jobs/${a}`, { method: "DELETE", headers: ADMIN })).status, 200);
    assert.equal((await capped.call(`/v3/jobs/${c}/track`, { method: "POST", headers: ADMIN })).status, 201);
  } finally {
    await capped.close();
  }
});
