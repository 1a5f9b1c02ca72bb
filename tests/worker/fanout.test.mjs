// Scale past one invocation: 200 runs complete through the registry's alarm fan-out.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { rowIds, startWorker } from "./worker-fixture.mjs";

const RUNS = 200;
const CHUNK = 25;
let w;
before(async () => {
  // Without webhooks or per-run cadence, only the cron ticks' fan-out can finish the runs.
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", SUBREQUEST_BUDGET: "10", FANOUT_CHUNK: String(CHUNK) }, sim: { webhook: null } });
});
after(() => w.close());

// Bounds, not waits: on two cores shared with other suites a sweep of 200 runs can take seconds.
test(`${RUNS} runs complete through the fan-out, every row once, no invocation over its budget`, { timeout: 150000 }, async () => {
  const jobs = Array.from({ length: RUNS }, () => w.sim.createJob({ rows: 30, durationMs: 1000, pageSize: 10 }).jobUid);
  const tokens = new Map();
  for (let i = 0; i < RUNS; i += 20) {
    const batch = jobs.slice(i, i + 20);
    const got = await Promise.all(batch.map((jobUid) => w.track(jobUid)));
    batch.forEach((jobUid, k) => tokens.set(jobUid, got[k]));
  }
  // Each tick kicks every active run once; tick until the registry has retired them all. The
  // runs end after 1 s at the API and each needs a step or two after that.
  const stats = await w.until(async () => {
    await w.tick();
    const now = await w.registryStats();
    return now.active === 0 && now;
  }, "every run retired", { timeoutMs: 110000, everyMs: 300 });
  assert.equal(stats.active, 0, `runs still active: ${stats.active}`);
  assert.equal(stats.retired, RUNS);
  // The registry never kicked more runs in one alarm invocation than its chunk.
  assert.ok(Math.max(...stats.kicksPerInvocation) <= CHUNK, `kicks per invocation: ${stats.kicksPerInvocation}`);
  assert.ok(stats.kicksPerInvocation.filter((k) => k === CHUNK).length >= RUNS / CHUNK, "sweeps took several invocations");
  for (const jobUid of jobs) {
    assert.ok(w.requestsPerStep(jobUid).every((n) => n <= 10), `a step of ${jobUid} went over budget`);
  }
  const reads = await Promise.all(jobs.map(async (jobUid) => {
    const run = await w.run(jobUid, tokens.get(jobUid));
    return { status: run.body.status, ids: (await w.rows(jobUid, tokens.get(jobUid))).map((r) => r.id) };
  }));
  const expected = rowIds(30);
  const wrong = reads.filter((r) => r.status !== "finished" || JSON.stringify(r.ids) !== JSON.stringify(expected));
  assert.equal(wrong.length, 0, `runs with wrong rows or status: ${wrong.length}`);
  w.assertOutboundClean();
});
