// `node tests/worker/capacity.mjs [runs]`: N tracked runs (default 1,000) through the cron fan-out in
// Miniflare, cron only (POLL_INTERVAL_MS=0), free-plan budgets. Prints, per tick: registry alarm
// invocations and kicks, API requests, and the time until every step it started was answered.
// The figures feed the capacity model in worker/README.md. Not a test: run it by hand.
// A tick is over on a condition, not after a quiet window: the registry's sweep has ended, no run
// has a step due (with POLL_INTERVAL_MS=0 a run holds no alarm between kicks) and every request
// the worker sent has its answer. (What this cannot see: a step in the few ms between two of its
// requests, or before its first.)
import { settings } from "../../worker/src/config.js";
import { rowIds, startWorker } from "./worker-fixture.mjs";

const RUNS = Number(process.argv[2] ?? 1000);
const ROWS = 30;
const HOUR = 3_600_000;

const w = await startWorker({
  bindings: { POLL_INTERVAL_MS: "0", SUBREQUEST_BUDGET: "50" },
  sim: { webhook: null },
});

/** Every tracked run stepped as far as it was asked to: no alarm due, every request answered. */
async function noStepDue(jobs) {
  if (!w.outbound.every((r) => r.answered)) return false;
  for (let i = 0; i < jobs.length; i += 50) {
    const alarms = await Promise.all(jobs.slice(i, i + 50).map(async (jobUid) => (await w.runStorage(jobUid)).alarm));
    if (alarms.some((alarm) => alarm !== null && alarm <= Date.now() + HOUR)) return false;
  }
  return w.outbound.every((r) => r.answered);
}

/** The latest answer among the requests from `from` on (ms since the epoch), or `since` when none. */
const lastAnswer = (from, since) => Math.max(since, ...w.outbound.slice(from).map((r) => r.answeredAt));

try {
  const { fanoutChunk } = settings(w.options.bindings);
  const jobs = Array.from({ length: RUNS }, () => w.sim.createJob({ rows: ROWS, durationMs: 20000, pageSize: 10 }).jobUid);
  const tokens = new Map();
  const t0 = Date.now();
  for (let i = 0; i < RUNS; i += 50) {
    const batch = jobs.slice(i, i + 50);
    const got = await Promise.all(batch.map((jobUid) => w.track(jobUid)));
    batch.forEach((jobUid, k) => tokens.set(jobUid, got[k]));
  }
  console.log(`capacity: tracked ${RUNS} runs in ${Date.now() - t0} ms (each tracked run steps once at once)`);
  // The first steps (at tracking) answered before the first tick.
  await w.until(() => noStepDue(jobs), "the steps started by tracking", { timeoutMs: 600_000, everyMs: 200 });
  const ticks = [];
  for (let tick = 1; tick <= 30; tick++) {
    const before = { requests: w.outbound.length, invocations: (await w.registryStats()).kicksPerInvocation.length };
    const started = Date.now();
    await w.tick();
    // The sweep ends with an invocation that kicks fewer runs than a chunk (none, when they divide evenly).
    const swept = async () => {
      const kicks = (await w.registryStats()).kicksPerInvocation.slice(before.invocations);
      return kicks.length > 0 && kicks.at(-1) < fanoutChunk;
    };
    await w.until(async () => (await swept()) && (await noStepDue(jobs)), `tick ${tick} to be over`, { timeoutMs: 600_000, everyMs: 200 });
    const stats = await w.registryStats();
    const kicks = stats.kicksPerInvocation.slice(before.invocations);
    const entry = {
      tick,
      ms: lastAnswer(before.requests, started) - started,
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
    // Ticks a minute apart in production, by which time the runs (20 s long) have ended: they end
    // on command here, after two ticks of growing runs.
    if (tick === 2) for (const jobUid of jobs) w.sim.finish(jobUid);
  }
  // Check: every run finished with every row once.
  const wrong = [];
  for (let i = 0; i < RUNS; i += 50) {
    const batch = jobs.slice(i, i + 50);
    const reads = await Promise.all(batch.map(async (jobUid) => (await w.rows(jobUid, tokens.get(jobUid))).map((r) => r.id).join()));
    wrong.push(...batch.filter((_, k) => reads[k] !== rowIds(ROWS).join()));
  }
  const perRun = w.outbound.length / RUNS;
  console.log(`capacity: ${RUNS} runs, ${w.outbound.length} API requests in all (${perRun.toFixed(1)} per run), ${wrong.length} runs with wrong rows, ${Date.now() - t0} ms`);
  for (const jobUid of wrong.slice(0, 3)) {
    const { body } = await w.run(jobUid, tokens.get(jobUid));
    console.log(`capacity: ${jobUid} as a reader sees it: ${JSON.stringify({ status: body.status, row_count: body.row_count, error_message: body.error_message })}`);
  }
  if (wrong.length > 0) console.log(`capacity: the worker's last log lines:\n  ${w.logs.slice(-10).join("\n  ")}`);
  w.assertOutboundClean();
} finally {
  await w.close();
}
