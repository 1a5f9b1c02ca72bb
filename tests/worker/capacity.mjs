// `node tests/worker/capacity.mjs [runs]`: N tracked runs (default 1,000) through the cron fan-out in
// Miniflare, cron only (POLL_INTERVAL_MS=0), free-plan budgets. Prints, per tick: registry alarm
// invocations and kicks, API requests, and the time until every step it started was answered.
// The figures feed the capacity model in worker/README.md. Not a test: run it by hand.
import { rowIds, startWorker, wait } from "./worker-fixture.mjs";

const RUNS = Number(process.argv[2] ?? 1000);
const ROWS = 30;

const w = await startWorker({
  bindings: { POLL_INTERVAL_MS: "0", SUBREQUEST_BUDGET: "50" },
  sim: { webhook: null },
});
try {
  const jobs = Array.from({ length: RUNS }, () => w.sim.createJob({ rows: ROWS, durationMs: 20000, pageSize: 10 }).jobUid);
  const tokens = new Map();
  const t0 = Date.now();
  for (let i = 0; i < RUNS; i += 50) {
    const batch = jobs.slice(i, i + 50);
    const got = await Promise.all(batch.map((jobUid) => w.track(jobUid)));
    batch.forEach((jobUid, k) => tokens.set(jobUid, got[k]));
  }
  console.log(`capacity: tracked ${RUNS} runs in ${Date.now() - t0} ms (each tracked run steps once at once)`);
  // Let the first steps (at tracking) finish.
  let last = -1;
  while (w.outbound.length !== last) {
    last = w.outbound.length;
    await wait(500);
  }
  const ticks = [];
  for (let tick = 1; tick <= 30; tick++) {
    const before = { requests: w.outbound.length, invocations: (await w.registryStats()).kicksPerInvocation.length };
    const started = Date.now();
    await w.tick();
    // The tick is over when the registry's sweep ended and the API saw no request for 300 ms.
    let quietSince = Date.now();
    let seen = w.outbound.length;
    for (;;) {
      await wait(50);
      if (w.outbound.length !== seen) {
        seen = w.outbound.length;
        quietSince = Date.now();
      } else if (Date.now() - quietSince >= 300) break;
    }
    const stats = await w.registryStats();
    const kicks = stats.kicksPerInvocation.slice(before.invocations);
    const entry = {
      tick,
      ms: quietSince - started,
      requests: w.outbound.length - before.requests,
      invocations: kicks.length,
      kicks: kicks.reduce((a, b) => a + b, 0),
      active: stats.active,
    };
    ticks.push(entry);
    console.log(
      `capacity: tick ${tick}: ${entry.kicks} kicks in ${entry.invocations} registry alarm invocations, ${entry.requests} API requests, ` +
        `${entry.ms} ms until the last answer; ${entry.active} runs still active`,
    );
    if (stats.active === 0) break;
    // Ticks a minute apart in production; here the simulated runs end after 20 s, so wait for that.
    if (tick === 2) await wait(Math.max(0, 20000 - (Date.now() - t0)));
  }
  // Check: every run finished with every row once.
  let wrong = 0;
  for (let i = 0; i < RUNS; i += 50) {
    const batch = jobs.slice(i, i + 50);
    const reads = await Promise.all(batch.map(async (jobUid) => (await w.rows(jobUid, tokens.get(jobUid))).map((r) => r.id).join()));
    wrong += reads.filter((ids) => ids !== rowIds(ROWS).join()).length;
  }
  const perRun = w.outbound.length / RUNS;
  console.log(`capacity: ${RUNS} runs, ${w.outbound.length} API requests in all (${perRun.toFixed(1)} per run), ${wrong} runs with wrong rows, ${Date.now() - t0} ms`);
  w.assertOutboundClean();
} finally {
  await w.close();
}
