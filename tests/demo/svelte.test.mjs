// `captaindata-poller/svelte` in Node against the simulator over HTTP: Svelte's store contract
// (run called at once and on each change, an unsubscribe function), polling from the first
// subscriber to the last unsubscribe and no request after it, one poller for equal options,
// and what the store costs on a 50,000-row run (the same core serves React and Vue).
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createJobPoller } from "captaindata-poller/svelte";
import { FAST, afterMicrotasks, rowIds, untilQuiet, useSim } from "../package/sim-fixture.mjs";
import { until as untilCondition } from "../support/until.mjs";

const ctx = useSim();

/** A fetch that records when each request is sent (the poller's `fetch` option). */
function recordingFetch() {
  const sent = [];
  const fetch = (input, init) => {
    sent.push({ url: String(input), t: performance.now() });
    return globalThis.fetch(input, init);
  };
  return { sent, fetch };
}

/** Subscribes and records every value; `until(pred)` resolves once a value matches. */
function watchStore(store) {
  const values = [];
  const changes = new Set();
  const unsubscribe = store.subscribe((value) => {
    values.push(value);
    for (const recheck of [...changes]) recheck();
  });
  // The first value that matches, re-checked on each new one (tests/support/until.mjs).
  const onValue = (recheck) => (changes.add(recheck), () => changes.delete(recheck));
  const until = (pred) => untilCondition(() => values.find(pred), { on: [onValue], what: "a store value" });
  return { values, unsubscribe, until, last: () => values.at(-1) };
}

const ended = (s) => ["finished", "failed", "stopped"].includes(s.status);

test("store contract: run gets the value at once, and an unsubscribe function comes back", async () => {
  const idle = createJobPoller(null);
  let seen;
  const unsubscribe = idle.subscribe((value) => (seen = value));
  assert.equal(seen.status, "idle");
  assert.equal(typeof unsubscribe, "function");
  unsubscribe();
  unsubscribe(); // twice is harmless
  assert.deepEqual(Object.keys(await import("captaindata-poller/svelte")), ["createJobPoller"], "one name for the store, the README's");
});

test("first subscriber starts, every row once; the last unsubscribe stops it and nothing is sent after", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 4000, durationMs: 60000, pageSize: 1000 });
  const { sent, fetch } = recordingFetch();
  const store = createJobPoller({ ...ctx.connection, ...FAST, jobUid, fetch });
  const a = watchStore(store);
  assert.equal(a.values[0].status, "idle", "a value at once: idle until the poller starts (what a server render shows)");
  await a.until((s) => s.status === "loading");
  assert.equal(a.values[1].status, "loading", "then loading, once the poller starts");
  const b = watchStore(store); // a second subscriber (another component) shares the poller
  await a.until((s) => s.rowCount > 0);
  a.unsubscribe();
  const beforeB = sent.length;
  await b.until((s) => s.rowCount > a.last().rowCount || sent.length > beforeB + 2);
  assert.ok(sent.length > beforeB, "still polling while a subscriber is left");
  b.unsubscribe();
  const stoppedAt = performance.now();
  await untilQuiet({ sim: ctx.sim, what: "the last subscriber's poller to stop" }); // nothing left that could send
  assert.deepEqual(sent.filter((r) => r.t > stoppedAt), []);
  const rows = b.last().rows;
  assert.deepEqual(rows.map((r) => r.id), rowIds(rows.length), "each row once, in order");
});

test("equal options make one poller: two stores, one set of requests", async () => {
  const spec = { rows: 120, durationMs: 1, pageSize: 25 };
  const { jobUid } = ctx.sim.createJob(spec);
  const options = () => ({ ...ctx.connection, ...FAST, jobUid, onBatch() {} }); // a new object and callback each time
  const a = watchStore(createJobPoller(options()));
  const b = watchStore(createJobPoller(options()));
  const [endA, endB] = await Promise.all([a.until(ended), b.until(ended)]);
  assert.equal(endA, endB, "the same snapshot");
  assert.equal(endA.status, "finished");
  assert.deepEqual(endA.rows.map((r) => r.id), rowIds(120));
  const lone = ctx.sim.createJob(spec).jobUid;
  const c = watchStore(createJobPoller({ ...options(), jobUid: lone }));
  await c.until(ended);
  assert.deepEqual(ctx.sim.stats(jobUid).requests, ctx.sim.stats(lone).requests);
  a.unsubscribe();
  b.unsubscribe();
  c.unsubscribe();
});

test("a server render's subscribe then unsubscribe in one tick sends nothing", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 100, durationMs: 1000 });
  const { sent, fetch } = recordingFetch();
  const store = createJobPoller({ ...ctx.connection, ...FAST, jobUid, fetch });
  store.subscribe(() => {})();
  await untilQuiet({ sim: ctx.sim }); // nothing armed, so nothing can be sent
  assert.deepEqual(sent, []);
  assert.equal(ctx.sim.stats(jobUid).requests.total, 0);
});

test("stop() from the value: status stopped, the cursor kept, no request after", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 3000, durationMs: 60000 });
  const { sent, fetch } = recordingFetch();
  const s = watchStore(createJobPoller({ ...ctx.connection, ...FAST, jobUid, fetch }));
  const polling = await s.until((v) => v.rowCount > 0);
  polling.stop();
  const stoppedAt = performance.now();
  const stopped = await s.until(ended);
  assert.equal(stopped.status, "stopped");
  assert.equal(stopped.error, null);
  assert.equal(typeof stopped.cursor, "string");
  await untilQuiet({ sim: ctx.sim, what: "the stopped poller to hold no timer" });
  assert.deepEqual(sent.filter((r) => r.t > stoppedAt), []);
  s.unsubscribe();
});

test("a bad option: status failed with the TypeError naming it, and no request", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 100, durationMs: 1000 });
  const s = watchStore(createJobPoller({ ...ctx.connection, ...FAST, jobUid, maxRequests: -1 }));
  const failed = await s.until(ended);
  assert.equal(failed.status, "failed");
  assert.ok(failed.error instanceof TypeError);
  assert.equal(failed.error.code, "INVALID_OPTION", "every failed state has error.code");
  assert.match(failed.error.message, /maxRequests/);
  assert.equal(ctx.sim.stats(jobUid).requests.total, 0);
  s.unsubscribe();
  const rows = watchStore(createJobPoller({ ...ctx.connection, ...FAST, jobUid, keepRows: "all" }));
  assert.match((await rows.until(ended)).error.message, /Expected `keepRows` to be/);
  rows.unsubscribe();
});

test("onBatch failing on the second batch: CALLBACK_FAILED, rows and cursor before it; resume() delivers the rest once", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 100, durationMs: 1, pageSize: 25 });
  let calls = 0;
  const s = watchStore(
    createJobPoller({
      ...ctx.connection,
      ...FAST,
      jobUid,
      onBatch() {
        calls += 1;
        if (calls === 2) throw new Error("the database is down");
      },
    }),
  );
  const failed = await s.until(ended);
  assert.equal(failed.status, "failed");
  assert.equal(failed.error.code, "CALLBACK_FAILED");
  assert.equal(failed.error.cause.message, "the database is down");
  assert.deepEqual(failed.rows.map((r) => r.id), rowIds(25), "only the batch onBatch took");
  failed.resume();
  const done = await s.until((v) => v !== failed && ended(v));
  assert.equal(done.status, "finished", `${done.error?.code}: ${done.error?.message}`);
  assert.deepEqual(done.rows.map((r) => r.id), rowIds(100), "the failed batch again, then the rest, each once");
  assert.equal(done.rowCount, 100);
  assert.equal(calls, 5, "onBatch got the failed batch again");
  s.unsubscribe();
});

test("a new store with the saved cursor, once the failed one is gone, goes on from there", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 100, durationMs: 1, pageSize: 25 });
  const options = { ...ctx.connection, ...FAST, jobUid };
  const first = watchStore(createJobPoller({ ...options, onBatch: (b) => { if (b.offset === 50) throw new Error("full"); } }));
  const failed = await first.until(ended);
  assert.equal(failed.error.code, "CALLBACK_FAILED");
  first.unsubscribe();
  await afterMicrotasks(); // the failed store is released
  const second = watchStore(createJobPoller({ ...options, cursor: failed.cursor }));
  const done = await second.until(ended);
  assert.equal(done.status, "finished");
  assert.deepEqual([...failed.rows, ...done.rows].map((r) => r.id), rowIds(100));
  // rows and rowCount never disagree silently: rowsBefore says where `rows` starts in the run.
  assert.deepEqual({ rowCount: done.rowCount, rowsBefore: done.rowsBefore, rows: done.rows.length }, { rowCount: 100, rowsBefore: 50, rows: 50 });
  second.unsubscribe();
});

test("retries under way are in the state: retrying {attempt, retries, error} while polling, null after the next answer", async () => {
  // Three 503s in a row on the run's reads: retried (FAST: 5 retries, 5–50 ms apart), then answered.
  const { jobUid } = ctx.sim.createJob({ rows: 60, durationMs: 1, pageSize: 25, faults: { script: [{ kind: "any", nth: 2, respond: 503, count: 3 }] } });
  const s = watchStore(createJobPoller({ ...ctx.connection, ...FAST, jobUid }));
  const first = await s.until((v) => v.run !== null || ended(v));
  assert.ok(first.run !== null && "retrying" in first.run, `the run's status says whether a retry is under way: ${JSON.stringify(first.run)}`);
  const retrying = await s.until((v) => v.retrying !== null);
  assert.ok(["loading", "polling"].includes(retrying.status), `status stays ${retrying.status} while retrying`);
  assert.equal(retrying.retrying.attempt, 1);
  assert.equal(retrying.retrying.retries, FAST.retry.retries);
  assert.equal(retrying.retrying.error.status, 503);
  assert.equal(retrying.retrying.error.code, "SERVER_ERROR");
  assert.ok(retrying.retrying.delayMs >= 0);
  assert.ok(!JSON.stringify(retrying.retrying).includes(ctx.connection.apiKey), "no secret in it");
  const attempts = s.values.filter((v) => v.retrying !== null).map((v) => v.retrying.attempt);
  const end = await s.until(ended);
  assert.equal(end.status, "finished");
  assert.equal(end.retrying, null, "null once it ended");
  assert.ok(s.values.some((v, i) => i > 0 && v.retrying === null && s.values[i - 1].retrying !== null && v.status !== "finished"), "back to null at the next successful answer");
  assert.deepEqual(s.values.filter((v) => v.retrying !== null).map((v) => v.retrying.attempt).slice(0, 3), [1, 2, 3], `attempts ${attempts}`);
  assert.deepEqual(end.rows.map((r) => r.id), rowIds(60));
  s.unsubscribe();
});

/** `gc()` for the heap figures (the flag must be set before the first call). */
function collector() {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc");
}

test("50,000 rows: no row copied, one new value per batch; keepRows bounds the memory", async (t) => {
  const gc = collector();
  const spec = { rows: 50000, durationMs: 2000, pageSize: 1000, rowBytes: 200 };
  const measure = async (keepRows) => {
    const { jobUid } = ctx.sim.createJob(spec);
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    let batches = 0;
    let maxKept = 0;
    const s = watchStore(createJobPoller({ ...ctx.connection, ...FAST, jobUid, keepRows, onBatch: () => void batches++ }));
    const end = await s.until(ended);
    for (const v of s.values) maxKept = Math.max(maxKept, v.rows.length);
    const withRows = s.values.filter((v, i) => i > 0 && v.rowCount !== s.values[i - 1].rowCount);
    const runs = new Set(s.values.map((v) => v.run)).size - 1; // onStatus calls (the first value has none)
    const arrays = new Set(s.values.slice(1).map((v) => v.rows));
    gc();
    const retained = process.memoryUsage().heapUsed - heapBefore;
    s.unsubscribe();
    return { end, batches, runs, values: s.values.length, withRows: withRows.length, arrays: arrays.size, maxKept, retained };
  };
  const all = await measure(undefined);
  assert.equal(all.end.status, "finished");
  assert.equal(all.end.rowCount, 50000);
  assert.deepEqual(all.end.rows.map((r) => r.index), Array.from({ length: 50000 }, (_, i) => i));
  assert.equal(all.arrays, 1, "every value holds the same rows array: no batch copied earlier rows");
  assert.equal(all.withRows, all.batches, "one new value per batch");
  // Besides batches, a new value only for what the user sees change: the run's status or counts,
  // the role, the end.
  // (and the first value, idle, then loading when the poller starts)
  assert.ok(all.values <= all.batches + all.runs + 4, `values ${all.values} for ${all.batches} batches, ${all.runs} statuses`);
  const bounded = await measure(1000);
  assert.equal(bounded.end.rowCount, 50000);
  assert.equal(bounded.end.rowsBefore, 49000, "the rows keepRows let go are counted before rows[0]");
  assert.ok(bounded.maxKept <= 1000, `kept ${bounded.maxKept} rows`);
  // The simulator runs in this process and keeps each run: a run with keepRows 0 is the baseline.
  const none = await measure(0);
  assert.equal(none.maxKept, 0);
  const mb = (m) => `${((m.retained - none.retained) / 1e6).toFixed(1)} MB`;
  const concatCopies = (batches) => (50000 * (batches - 1)) / 2; // what prev.concat(batch) would copy, about
  t.diagnostic(
    `50,000 rows in ${all.batches} batches and ${all.runs} status changes: ${all.values} values, ${Math.round(50000 / all.withRows)} rows per value, ` +
      `0 rows copied (prev.concat: ~${concatCopies(all.batches).toLocaleString("en")}); ` +
      `rows retained by the store: ${mb(all)} (${Math.round((all.retained - none.retained) / 50000)} B/row) with every row, ` +
      `${mb(bounded)} with keepRows 1000, none with keepRows 0`,
  );
});
