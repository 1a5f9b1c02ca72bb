// Durability: workerd restarted with its persisted Durable Object storage in the middle of runs,
// and a Captain Data outage longer than the give-up threshold followed by recovery. What a
// reader notices: every row once, in order, the final status; and no API key in the storage.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { API_KEY, SECRETS, rowIds, startWorker } from "./worker-fixture.mjs";

/** The stored `run` row of a job (RunTracker.load over RPC). */
async function stored(w, jobUid) {
  const ns = await w.mf.getDurableObjectNamespace("RUNS");
  return ns.get(ns.idFromName(jobUid)).load();
}

/** Every file under `dir` (the persisted SQLite databases, WAL included). */
function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/** Asserts every run finished with rows 0..n-1 exactly once, in order, as a reader sees them. */
async function assertAllRows(w, runs, n) {
  for (const { jobUid, token } of runs) {
    const ids = (await w.rows(jobUid, token)).map((r) => r.id);
    assert.deepEqual(ids, rowIds(n), `rows of ${jobUid}`);
    assert.equal((await w.run(jobUid, token)).body.status, "finished");
  }
}

test("workerd restarted twice mid-run on its persisted storage: every row once, no key stored", { timeout: 120000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "cdp-durability-"));
  const w = await startWorker({
    persist: dir,
    bindings: { POLL_INTERVAL_MS: "50", SUBREQUEST_BUDGET: "4" },
    sim: { webhook: null },
  });
  try {
    const ROWS = 240;
    const runs = [];
    for (let i = 0; i < 6; i++) {
      const { jobUid } = w.sim.createJob({ rows: ROWS, durationMs: 2500, pageSize: 20 });
      runs.push({ jobUid, token: await w.track(jobUid) });
    }
    const progress = async () => {
      const states = await Promise.all(runs.map((r) => stored(w, r.jobUid)));
      return states.reduce((sum, s) => sum + s.row_count, 0) / (ROWS * runs.length);
    };
    const restarts = [];
    for (const at of [0.2, 0.6]) {
      await w.until(async () => (await progress()) >= at, `${at * 100} % of the rows stored`, { timeoutMs: 30000 });
      const before = await progress();
      await w.restart(); // steps in flight are killed mid-way
      const after = await progress();
      restarts.push({ before, after });
      assert.ok(after >= before, "nothing stored was lost by the restart");
    }
    const done = Date.now();
    for (const { jobUid, token } of runs) await w.untilDone(jobUid, token, { timeoutMs: 30000 });
    console.log(
      `durability: restarts at ${restarts.map((r) => `${(r.before * 100).toFixed(0)} %`).join(" and ")} of the rows stored; ` +
        `all ${runs.length} runs finished ${Date.now() - done} ms after the last restart, every row once`,
    );
    await assertAllRows(w, runs, ROWS);
    w.assertOutboundClean();

    // The persisted storage holds the rows (positive control), never the key.
    await w.mf.dispose();
    const files = filesUnder(dir);
    const text = files.map((f) => readFileSync(f).toString("latin1")).join("\n");
    assert.ok(text.includes(runs[0].jobUid) && text.includes('"row-0"'), "the scan reads the stored runs and rows");
    assert.ok(!text.includes(API_KEY), "the API key is in the persisted Durable Object storage");
    w.mf = null;
  } finally {
    if (w.mf) await w.mf.dispose();
    await w.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an outage longer than MAX_FAILED_STEPS gives the runs up; tracking them again resumes from the cursor", { timeout: 120000 }, async () => {
  const w = await startWorker({
    bindings: { POLL_INTERVAL_MS: "50", MAX_FAILED_STEPS: "3", FAILED_STEP_BACKOFF_MS: "20", RETRY_RETRIES: "1", SUBREQUEST_BUDGET: "5" },
    sim: { webhook: null },
  });
  try {
    const ROWS = 120;
    const runs = [];
    for (let i = 0; i < 4; i++) {
      const { jobUid } = w.sim.createJob({ rows: ROWS, durationMs: 2000, pageSize: 10 });
      runs.push({ jobUid, token: await w.track(jobUid) });
    }
    await w.until(async () => (await Promise.all(runs.map((r) => stored(w, r.jobUid)))).every((s) => s.row_count > 0), "rows stored for every run");

    // Captain Data down: every other request a 503, the rest dropped connections.
    let n = 0;
    let outageRequests = 0;
    w.hooks.intercept = () => {
      outageRequests += 1;
      if (n++ % 2 === 0) return new Response(JSON.stringify({ message: "Service Unavailable" }), { status: 503 });
      throw new TypeError("connection dropped");
    };
    const outageStart = Date.now();
    const givenUp = await w.until(
      async () => {
        const states = await Promise.all(runs.map((r) => stored(w, r.jobUid)));
        return states.every((s) => s.done === 1) && states;
      },
      "every run given up",
      { timeoutMs: 30000 },
    );
    assert.ok(givenUp.every((s) => s.error_code === "RETRIES_EXHAUSTED"), JSON.stringify(givenUp.map((s) => s.error_code)));
    const seen = await w.run(runs[0].jobUid, runs[0].token);
    const rowsAtGiveUp = givenUp.map((s) => s.row_count);
    console.log(
      `durability: outage: all runs given up ${Date.now() - outageStart} ms after it began (${outageRequests} failed requests); ` +
        `a reader sees status "${seen.body.status}", error_message "${seen.body.error_message}"`,
    );

    // Recovery: the API answers again. A given-up run is not resumed by the cron (it was retired)…
    w.hooks.intercept = undefined;
    const before = w.outbound.length;
    for (let i = 0; i < 3; i++) await w.tick();
    await w.until(async () => (await w.registryStats()).active === 0, "the sweep retired the given-up runs");
    assert.equal(w.outbound.length, before, "no request for a given-up run without tracking it again");

    // …tracking it again is: it continues from its cursor, keeping the rows it stored.
    for (const { jobUid } of runs) {
      const res = await w.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` } });
      assert.equal(res.body.resumed, true);
    }
    for (const { jobUid, token } of runs) await w.untilDone(jobUid, token, { timeoutMs: 30000 });
    await assertAllRows(w, runs, ROWS);
    const resumed = await Promise.all(runs.map((r) => stored(w, r.jobUid)));
    assert.ok(resumed.every((s, i) => s.row_count === ROWS && rowsAtGiveUp[i] > 0));
    w.assertOutboundClean();
  } finally {
    await w.close();
  }
});
