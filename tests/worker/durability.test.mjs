// Durability: workerd restarted with its persisted Durable Object storage in the middle of runs,
// and a Captain Data outage longer than the give-up threshold followed by recovery. What a
// reader notices: every row once, in order, the final status; and no API key in the storage.
// The simulator runs on a manual clock: the runs are mid-way at each restart and during the
// outage whatever the machine's speed, and they end when the test says so.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { API_KEY, SECRETS, rowIds, startWorker } from "./worker-fixture.mjs";

/** Every file under `dir` (the persisted SQLite databases, WAL included). */
function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/** The runs as a reader sees them (GET /v3/jobs/{uid}). */
const readAll = (w, runs) => Promise.all(runs.map(async (r) => (await w.run(r.jobUid, r.token)).body));

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
  const clock = manualClock(Date.now());
  const start = clock.now();
  const DURATION = 10000;
  const w = await startWorker({
    persist: dir,
    bindings: { POLL_INTERVAL_MS: "50", SUBREQUEST_BUDGET: "4" },
    sim: { webhook: null, clock },
  });
  try {
    const ROWS = 240;
    const runs = [];
    for (let i = 0; i < 6; i++) {
      const { jobUid } = w.sim.createJob({ rows: ROWS, durationMs: DURATION, pageSize: 20 });
      runs.push({ jobUid, token: await w.track(jobUid) });
    }
    const progress = async () => (await readAll(w, runs)).reduce((sum, run) => sum + run.row_count, 0) / (ROWS * runs.length);
    const restarts = [];
    // The API has 30 %, then 70 % of the rows; each restart comes once the worker stored 20 %,
    // then 60 %, while its steps (every 50 ms, 4 requests each) are still reading.
    for (const [made, at] of [[0.3, 0.2], [0.7, 0.6]]) {
      clock.set(start + made * DURATION);
      await w.until(async () => (await progress()) >= at, `${at * 100} % of the rows stored`);
      const before = await progress();
      await w.restart(); // steps in flight are killed mid-way
      const after = await progress();
      restarts.push({ before, after });
      assert.ok(after >= before, "nothing stored was lost by the restart");
      assert.ok((await readAll(w, runs)).every((run) => run.status === "running"), "the runs are mid-way");
    }
    clock.set(start + DURATION); // the runs end at the API
    const done = Date.now();
    for (const { jobUid, token } of runs) await w.untilDone(jobUid, token);
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

test("an outage longer than MAX_FAILED_STEPS gives the runs up; a reader sees that after a restart; tracking them again resumes from the cursor", { timeout: 120000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "cdp-outage-"));
  const clock = manualClock(Date.now());
  const start = clock.now();
  const w = await startWorker({
    persist: dir,
    bindings: { POLL_INTERVAL_MS: "50", MAX_FAILED_STEPS: "3", FAILED_STEP_BACKOFF_MS: "20", RETRY_RETRIES: "1", SUBREQUEST_BUDGET: "5" },
    sim: { webhook: null, clock },
  });
  try {
    const ROWS = 120;
    const runs = [];
    for (let i = 0; i < 4; i++) {
      const { jobUid } = w.sim.createJob({ rows: ROWS, durationMs: 10000, pageSize: 10 });
      runs.push({ jobUid, token: await w.track(jobUid) });
    }
    clock.set(start + 3000); // 36 rows each at the API; the runs go on until the test ends them
    await w.until(async () => (await readAll(w, runs)).every((run) => run.row_count > 0), "rows stored for every run");

    // Captain Data down: every other request a 503, the rest dropped connections.
    let n = 0;
    let outageRequests = 0;
    w.hooks.intercept = () => {
      outageRequests += 1;
      if (n++ % 2 === 0) return new Response(JSON.stringify({ message: "Service Unavailable" }), { status: 503 });
      throw new TypeError("connection dropped");
    };
    const outageStart = Date.now();
    const GIVEN_UP = /^The worker stopped polling this run \(RETRIES_EXHAUSTED\); tracking it again resumes it\.$/;
    const givenUp = await w.until(async () => {
      const seen = await readAll(w, runs);
      return seen.every((run) => run.status === "paused" && GIVEN_UP.test(run.error_message)) && seen;
    }, "every run given up");
    const rowsAtGiveUp = givenUp.map((run) => run.row_count);
    console.log(
      `durability: outage: all runs given up ${Date.now() - outageStart} ms after it began (${outageRequests} failed requests); ` +
        `a reader sees status "${givenUp[0].status}", error_message "${givenUp[0].error_message}"`,
    );

    // After a restart a reader sees the same: paused (not failed, not finished), the message,
    // no finish time, and the rows stored before the outage, in order.
    await w.restart();
    const afterRestart = await readAll(w, runs);
    for (const [i, run] of afterRestart.entries()) {
      assert.deepEqual([run.status, run.error_message, run.finish_time, run.row_count], ["paused", givenUp[i].error_message, null, rowsAtGiveUp[i]]);
      assert.ok(rowsAtGiveUp[i] > 0);
      assert.deepEqual((await w.rows(runs[i].jobUid, runs[i].token)).map((r) => r.id), rowIds(rowsAtGiveUp[i]));
    }

    // Recovery: the API answers again. A given-up run is not resumed by the cron (it was retired)…
    w.hooks.intercept = undefined;
    const before = w.outbound.length;
    for (let i = 0; i < 3; i++) await w.tick();
    await w.until(async () => (await w.registryStats()).active === 0, "the sweep retired the given-up runs");
    assert.equal(w.outbound.length, before, "no request for a given-up run without tracking it again");

    // …tracking it again is: it continues from its cursor, keeping the rows it stored.
    clock.set(start + 10000); // the runs end at the API
    for (const { jobUid } of runs) {
      const res = await w.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` } });
      assert.equal(res.body.resumed, true);
    }
    for (const { jobUid, token } of runs) await w.untilDone(jobUid, token);
    await assertAllRows(w, runs, ROWS);
    w.assertOutboundClean();
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
