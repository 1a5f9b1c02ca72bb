// Slow: a run's object hibernates while its viewers are idle (no timer, no pending promise keeps
// it awake) and wakes for the next batch, which reaches the same sockets. workerd evicts an
// object after about 10 s without events, so this test waits that long: the one wait that is
// the point of the test, not a guess at how long something takes.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { rowIds, startWorker, wait } from "./worker-fixture.mjs";
import { ids, viewer } from "./stream-fixture.mjs";

const IDLE_MS = 15_000; // beyond workerd's inactivity timeout (10 s)
let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", PAGE_SIZE: "50" }, sim: { clock, webhook: null } });
});
after(() => w.close());

async function stats(jobUid) {
  const ns = await w.mf.getDurableObjectNamespace("RUNS");
  return ns.get(ns.idFromName(jobUid)).streamStats();
}

test("a hibernating object wakes for a new batch and sends it on the same sockets", { timeout: 120000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 60, durationMs: 2000, pageSize: 50, arrival: { bursts: 2 } });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status !== "pending", "first step stored");
  const viewers = [viewer(w.origin, jobUid, token), viewer(w.origin, jobUid, token)];
  await Promise.all(viewers.map((v) => v.opened));
  await w.until(() => viewers.every((v) => v.frames.some((f) => f.type === "status")), "viewers joined");
  // No RPC before the idle time: a stub held from here would keep the object in memory.
  const idleFrom = Date.now();
  await wait(IDLE_MS); // nothing happens: the object may hibernate
  clock.advance(1000);
  await w.tick(); // the alarm wakes the object; its step commits 30 rows
  await w.until(() => viewers.every((v) => v.rows.length >= 30), "the batch after the idle time");
  const woken = await stats(jobUid);
  assert.ok(woken.awakeSince > idleFrom, "the object was evicted while idle and constructed again");
  assert.equal(woken.viewers, 2, "the sockets outlived the hibernation");
  clock.advance(1000);
  await w.tick();
  await Promise.all(viewers.map((v) => v.done));
  for (const v of viewers) assert.deepEqual(ids(v), rowIds(60));
});
