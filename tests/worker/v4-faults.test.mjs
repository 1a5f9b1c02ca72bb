// 200 Captain Data v4 runs through the worker while 10 % of the callbacks are lost, 5 %
// duplicated and 5 % reordered: every row once in the worker and in a JobPoller reading it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { rowIds } from "./worker-fixture.mjs";
import { launchV4, readThroughWorker, startV4Worker } from "./v4-fixture.mjs";

const RUNS = 200;
const ROWS = 20; // two pages and the final callback per run: 600 callbacks
let w;
const clock = manualClock(Date.now());
before(async () => {
  const faults = { lostRate: 0.1, duplicateRate: 0.05, reorderRate: 0.05 };
  w = await startV4Worker({
    clock,
    sim: { seed: 27, v4Defaults: { rows: ROWS, pageSize: 10, durationMs: 3000, faults } },
    settings: { V4_STATUS_INTERVAL_MS: "15000", V4_RECHECK_MS: "300" },
  });
});
after(() => w.close());

/** Runs `task` over `items`, `width` at a time. */
async function inParallel(items, width, task) {
  const out = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i], i);
      }
    }),
  );
  return out;
}

const readWithJobPoller = ({ runUid, token }) => readThroughWorker(w, runUid, token, { intervalMs: 50, maxDurationMs: 30000 });

test(`${RUNS} v4 runs, 10 % of callbacks lost, 5 % duplicated, 5 % reordered: every row once in the worker and in a JobPoller`, async (t) => {
  const t0 = Date.now();
  const lap = (what) => t.diagnostic(`${what}: ${Date.now() - t0} ms`);
  const launched = await inParallel(Array.from({ length: RUNS }), 10, async () => {
    const res = await launchV4(w, { inputs: [{}] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { runUid: res.body.run_uid, token: res.body.read_token };
  });
  lap("launched");
  for (let s = 0; s < 3; s++) {
    clock.advance(1000); // a page of every run, then (at the end) the final callbacks
    w.sim.tick();
    await w.sim.v4.settled();
  }
  lap("callbacks sent");
  // The cron sweep kicks every run: those whose final callback was lost read their status now
  // instead of at the next slow status read.
  await w.tick();
  await inParallel(launched, 10, ({ runUid, token }) =>
    w.untilRun(runUid, token, (run) => run.finish_time !== null, "the worker ended the run", { timeoutMs: 60000, everyMs: 100 }),
  );
  lap("every run ended");
  const stored = await inParallel(launched, 10, ({ runUid, token }) => w.rows(runUid, token));
  const read = await inParallel(launched, 10, readWithJobPoller);
  lap("read by JobPollers");
  for (const [i, { runUid }] of launched.entries()) {
    const ids = stored[i].map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length, `${runUid}: no row twice in the worker`);
    assert.deepEqual([...ids].sort(), rowIds(ROWS).sort(), `${runUid}: every row in the worker`);
    assert.equal(read[i].summary.status, "finished");
    assert.deepEqual(read[i].rows.map((r) => r.id), ids, `${runUid}: the JobPoller got the worker's rows, once, in its order`);
  }

  const deliveries = w.sim.v4.deliveries();
  const originals = deliveries.filter((d) => d.parent_uid === null);
  const posts = w.sim.v4.callbacks();
  const figures = {
    runs: RUNS,
    rows: stored.reduce((n, rows) => n + rows.length, 0),
    callbacks: originals.length,
    lost: originals.filter((d) => d.http_status === 502).length,
    duplicated: posts.filter((p) => p.duplicate).length,
    reordered: launched.filter(({ runUid }) => isReordered(runUid)).length,
    replaysSent: w.sim.stats().requests["v4-replay"],
    rowsLost: RUNS * ROWS - stored.reduce((n, rows) => n + new Set(rows.map((r) => r.id)).size, 0),
  };
  t.diagnostic(JSON.stringify(figures));
  assert.equal(figures.rowsLost, 0);
  // The faults really happened, at about their rates.
  assert.ok(figures.lost > 30 && figures.lost < 100, `lost ${figures.lost}`);
  assert.ok(figures.duplicated > 10 && figures.duplicated < 55, `duplicated ${figures.duplicated}`);
  assert.ok(figures.reordered > 5, `reordered ${figures.reordered}`);
  assert.ok(figures.replaysSent >= figures.lost, "every lost callback was replayed");
  w.assertOutboundClean();
});

/** Whether a run's callbacks were sent out of their batches' order. */
function isReordered(runUid) {
  const planned = w.sim.v4.run(runUid).batches.map((b) => b.batchUid);
  const sent = w.sim.v4.callbacks(runUid).filter((p) => !p.replay && !p.duplicate).map((p) => planned.indexOf(p.batchUid));
  return sent.some((index, i) => i > 0 && index < sent[i - 1]);
}
