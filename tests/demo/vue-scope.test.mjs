// `captaindata-poller/vue` outside a component (a plain effectScope, in Node, against the
// simulator over HTTP): options as a ref; equal values keep the poller, a new jobUid restarts
// it (the old run gets no request after), disposing the scope stops it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { effectScope, nextTick, ref, watch } from "vue";
import { useJobPoller } from "captaindata-poller/vue";
import { FAST, rowIds, untilQuiet, useSim } from "../package/sim-fixture.mjs";
import { until as untilCondition } from "../support/until.mjs";

const ctx = useSim();

/** Resolves once `pred()` is true, re-checked whenever `source` changes (tests/support/until.mjs). */
function until(source, pred) {
  return untilCondition(pred, { on: [(recheck) => watch(source, recheck)], what: "the poller's state" });
}

test("equal values (and a saved cursor passed back) keep the poller; a new jobUid restarts it; disposing the scope stops it", async () => {
  const a = ctx.sim.createJob({ rows: 3000, durationMs: 60000 }).jobUid;
  const b = ctx.sim.createJob({ rows: 90, durationMs: 300, pageSize: 25 }).jobUid;
  const sent = [];
  const fetch = (input, init) => {
    sent.push({ url: String(input), t: performance.now() });
    return globalThis.fetch(input, init);
  };
  const options = ref({ ...ctx.connection, ...FAST, jobUid: a, fetch, onBatch() {} });
  const scope = effectScope();
  const poller = scope.run(() => useJobPoller(options));
  assert.equal(poller.status.value, "loading");
  await until(poller.rowCount, () => poller.rowCount.value > 0);

  const rowsOfA = poller.rows.value;
  const countBefore = poller.rowCount.value;
  // A new object, a new callback, the same values, and the saved cursor passed back (read once).
  options.value = { ...options.value, cursor: poller.cursor.value, onBatch() {} };
  await nextTick();
  await until(poller.rowCount, () => poller.rowCount.value > countBefore);
  assert.equal(poller.rows.value, rowsOfA, "the same poller (the same rows, grown)");
  assert.notEqual(poller.status.value, "loading");

  options.value = { ...options.value, jobUid: b, cursor: undefined };
  await nextTick();
  const switchedAt = performance.now();
  await until(poller.status, () => ["finished", "failed", "stopped"].includes(poller.status.value));
  assert.equal(poller.status.value, "finished", poller.error.value?.message);
  assert.deepEqual(poller.rows.value.map((r) => r.id), rowIds(90));
  assert.deepEqual(sent.filter((r) => r.url.includes(a) && r.t > switchedAt), [], "no request for the first run after the switch");

  scope.stop();
  const c = ctx.sim.createJob({ rows: 3000, durationMs: 60000 }).jobUid;
  const scope2 = effectScope();
  const third = scope2.run(() => useJobPoller({ ...ctx.connection, ...FAST, jobUid: c, fetch }));
  await until(third.rowCount, () => third.rowCount.value > 0);
  scope2.stop();
  const disposedAt = performance.now();
  await untilQuiet({ sim: ctx.sim, what: "the disposed scope's poller to hold no timer" }); // nothing left that could send
  assert.deepEqual(sent.filter((r) => r.t > disposedAt), []);
});
