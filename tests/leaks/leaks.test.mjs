// Leaks (its own npm test stage, run alone): 10,000 start/stop cycles and 1,000 pollers aborted together leave the JS heap, the
// wasm memory, the timers and the abort listeners as they found them; a 6-hour poll on a
// virtual clock (node:test mock timers for `Date` and `setTimeout`) ends at `maxDurationMs`.
import assert from "node:assert/strict";
import { mock, test } from "node:test";
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { JobPoller, preload } from "captaindata-poller";
// The same module instance the package's Node entry initialised (on first use, here preload()):
// `initSync()` hands back its exports.
import { initSync } from "../../pkg/captaindata_poller.js";
import { createSim } from "../../sim/index.js";
import { PACKAGE_CODE, trackPackageTimers } from "../support/timers.mjs";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
await preload();
const wasmMemory = Object.values(initSync()).find((value) => value instanceof WebAssembly.Memory);

const API_KEY = "sk_test_leaks_Zr4k9";
const PROJECT_ID = "sim-project";
const BASE_URL = "http://127.0.0.1:9/v3"; // never reached: every poller here has an in-process fetch

// ---- What the package leaves behind: its timers and its listeners, told apart by the stack
// (the package's calls come from its glue, pkg/captaindata_poller.js, and its files in dist/).
const fromPackage = () => /captaindata_poller\.js/.test(new Error().stack);
// The timers: the shared tracker (tests/support/timers.mjs), pending = set and neither cleared nor fired.
const timers = trackPackageTimers(PACKAGE_CODE);
const liveTimers = { get size() { return timers.pending().length; } };
const counts = {
  get setTimeout() { return timers.counts.set; },
  get clearTimeout() { return timers.counts.cleared; },
  addEventListener: 0,
  removeEventListener: 0,
};
const listeners = []; // { target, type, listener, once } added by the package and not removed
const realAdd = EventTarget.prototype.addEventListener;
const realRemove = EventTarget.prototype.removeEventListener;
EventTarget.prototype.addEventListener = function addEventListener(type, listener, options) {
  if (fromPackage()) {
    counts.addEventListener += 1;
    listeners.push({ target: new WeakRef(this), type, listener, once: Boolean(options?.once) });
  }
  return realAdd.call(this, type, listener, options);
};
EventTarget.prototype.removeEventListener = function removeEventListener(type, listener, options) {
  if (fromPackage()) {
    counts.removeEventListener += 1;
    const i = listeners.findIndex((l) => l.target.deref() === this && l.type === type && l.listener === listener);
    if (i >= 0) listeners.splice(i, 1);
  }
  return realRemove.call(this, type, listener, options);
};
/** Listeners still attached: not removed, and not a `once` one that fired (its signal aborted). */
const listenersLeft = () => listeners.filter((l) => !(l.once && l.target.deref()?.aborted) && l.target.deref() !== undefined).length;

// ---- Canned answers: a run that goes on, results with nothing new; nothing is retained per request.
const RUNNING = JSON.stringify({ uid: "j", status: "running", row_count: 0, total_row_count: 0, number_inputs: 1, error_message: null });
const EMPTY = JSON.stringify({ results: [], paging: { have_next_page: false, next: null } });
let requests = 0;
function cannedFetch(url) {
  requests += 1;
  const body = url.endsWith("/results") || url.includes("/results?") ? EMPTY : RUNNING;
  return Promise.resolve(new Response(body, { headers: { "content-type": "application/json" } }));
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Collects garbage, lets FinalizationRegistry callbacks (wasm-bindgen frees) run, then measures. */
async function measure() {
  for (let i = 0; i < 4; i++) {
    gc();
    await turn();
  }
  return { heap: process.memoryUsage().heapUsed, wasm: wasmMemory.buffer.byteLength };
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;

function poller(i, extra = {}) {
  return new JobPoller({ baseUrl: BASE_URL, apiKey: API_KEY, projectId: PROJECT_ID, jobUid: `job-${i}`, fetch: cannedFetch, intervalMs: 60000, ...extra });
}

/** One cycle: start, then stop at once, after the first request, or while asleep between polls. */
async function cycle(i, signal, free) {
  const p = poller(i, { signal });
  const started = p.start();
  if (i % 3 === 1) await Promise.resolve();
  if (i % 3 === 2) for (let k = 0; k < 3; k++) await turn(); // asleep on its 60 s timer by now
  p.stop();
  assert.equal((await started).status, "stopped");
  if (free) p.free();
}

async function cycles(n, signal, free) {
  for (let i = 0; i < n; i++) {
    await cycle(i, signal, free);
    // A full collection now and then, as a long-lived page gets: finalizers free dropped pollers.
    if (i % 1000 === 999) await measure();
  }
  return measure();
}

test("10,000 start/stop cycles: heap and wasm memory back to baseline, no timer or listener left", { timeout: 120000 }, async () => {
  const shared = new AbortController(); // one long-lived signal for every poller, never aborted
  await cycles(500, shared.signal, false); // warm-up: allocator and JIT reach their steady state
  const before = await measure();
  const c0 = { ...counts };
  const r0 = requests;
  // Pollers dropped without free(), as most code does: wasm-bindgen's FinalizationRegistry frees them.
  const after = await cycles(10000, shared.signal, false);
  const d = Object.fromEntries(Object.keys(c0).map((k) => [k, counts[k] - c0[k]]));
  const left = { timers: liveTimers.size, listeners: listenersLeft() };
  // The wasm memory never shrinks: what matters is that the next cycles reuse what the last ones freed.
  const again = await cycles(10000, shared.signal, false);
  const freed = await cycles(10000, shared.signal, true);
  console.log(
    `leaks: 10,000 start/stop cycles (${requests - r0} requests in all): JS heap ${mb(before.heap)} → ${mb(after.heap)}; ` +
      `wasm memory ${mb(before.wasm)} → ${mb(after.wasm)} (high-water mark of pollers awaiting finalization), → ${mb(again.wasm)} after 10,000 more, → ${mb(freed.wasm)} after 10,000 with free(); ` +
      `in the first 10,000: timers set ${d.setTimeout}, cleared ${d.clearTimeout}, left ${left.timers}; abort listeners added ${d.addEventListener}, removed ${d.removeEventListener}, left ${left.listeners}`,
  );
  assert.equal(left.timers, 0, "timers left behind");
  assert.equal(left.listeners, 0, "listeners left behind on the shared signal");
  assert.equal(liveTimers.size + listenersLeft(), 0, "timers or listeners left after 30,000 cycles");
  assert.ok(d.setTimeout >= 10000 / 3, `the cycles set timers (${d.setTimeout})`);
  assert.ok(d.addEventListener >= 10000, `a listener on the shared signal per poller (${d.addEventListener})`);
  assert.ok(after.heap - before.heap < 2e6, `JS heap grew by ${mb(after.heap - before.heap)}`);
  assert.ok(again.heap - before.heap < 2e6, `JS heap grew by ${mb(again.heap - before.heap)}`);
  // A leak of the ~800 bytes a poller holds in wasm would add 8 MB per 10,000.
  assert.ok(again.wasm - after.wasm <= 1e6, `wasm memory grew ${mb(again.wasm - after.wasm)} in the second 10,000`);
  // A bound, not equality: how much the allocator reuses depends on when finalizers ran, which V8 does not promise.
  assert.ok(freed.wasm - again.wasm <= 1e6, `cycles with free() grew the wasm memory ${mb(freed.wasm - again.wasm)}`);
});

test("1,000 pollers started and aborted together: all ABORTED with the reason, memory back, nothing left", { timeout: 60000 }, async () => {
  const before = await measure();
  const controller = new AbortController();
  const r0 = requests;
  const pollers = Array.from({ length: 1000 }, (_, i) => poller(i, { signal: controller.signal }));
  const started = pollers.map((p) => p.start());
  while (requests - r0 < 1000) await turn(); // each has sent its first request
  for (let k = 0; k < 3; k++) await turn();
  const during = { heap: process.memoryUsage().heapUsed, wasm: wasmMemory.buffer.byteLength, timers: liveTimers.size };
  const reason = new Error("user left the page");
  controller.abort(reason);
  const outcomes = await Promise.allSettled(started);
  assert.ok(outcomes.every((o) => o.status === "rejected" && o.reason.code === "ABORTED" && o.reason.cause === reason));
  pollers.length = 0;
  started.length = 0;
  outcomes.length = 0;
  const after = await measure();
  console.log(
    `leaks: 1,000 pollers aborted together: JS heap ${mb(before.heap)} → ${mb(during.heap)} running → ${mb(after.heap)}, ` +
      `wasm memory ${mb(before.wasm)} → ${mb(during.wasm)} → ${mb(after.wasm)}; timers ${during.timers} running → ${liveTimers.size} left; listeners left ${listenersLeft()}`,
  );
  assert.equal(during.timers, 1000, "each poller asleep on one timer");
  assert.equal(liveTimers.size, 0, "timers left behind");
  assert.equal(listenersLeft(), 0, "listeners left behind");
  assert.ok(after.heap - before.heap < 2e6, `JS heap grew by ${mb(after.heap - before.heap)}`);
  // The allocator keeps pages it grew into (wasm memory never shrinks); later waves must reuse
  // them. A bound, not equality: a wave whose finalizers have not run yet (V8 does not promise
  // when they do) needs fresh memory once, but three waves that leaked would need it three times.
  const wave = Math.max(during.wasm - before.wasm, 1 << 20);
  for (let w = 0; w < 3; w++) {
    const controller = new AbortController();
    const again = Array.from({ length: 1000 }, (_, i) => poller(i, { signal: controller.signal }).start());
    for (let k = 0; k < 5; k++) await turn();
    controller.abort();
    await Promise.allSettled(again);
    await measure();
  }
  const final = await measure();
  assert.ok(
    final.wasm - after.wasm <= wave,
    `three more waves of 1,000 grew the wasm memory ${mb(after.wasm)} → ${mb(final.wasm)} (one wave takes ${mb(during.wasm - before.wasm)})`,
  );
});

test("a 6-hour poll on a virtual clock ends at maxDurationMs exactly, with TIMEOUT", { timeout: 60000 }, async () => {
  const SIX_HOURS = 6 * 3600 * 1000;
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: Date.UTC(2026, 0, 1) });
  try {
    // The simulator reads the same mocked clock: a run that outlasts the poll.
    const sim = createSim({ apiKey: API_KEY, projectId: PROJECT_ID });
    const { jobUid } = sim.createJob({ rows: 40, durationMs: 10 * SIX_HOURS, pageSize: 10 });
    const rows = [];
    let endedAt = null;
    const t0 = Date.now();
    const p = new JobPoller({
      baseUrl: "http://127.0.0.1:9/v3",
      apiKey: API_KEY,
      projectId: PROJECT_ID,
      jobUid,
      fetch: (url, init) => sim.handle(new Request(url, init)),
      maxDurationMs: SIX_HOURS, // also the default
      onBatch: (b) => rows.push(...b.results.map((r) => r.id)),
      onError: () => (endedAt = Date.now()),
    });
    let outcome = null;
    p.start().then(
      (value) => (outcome = { value }),
      (error) => (outcome = { error }),
    );
    // Advance virtual time one second at a time, letting each answer settle in between.
    for (let s = 0; s <= SIX_HOURS / 1000 + 60 && outcome === null; s++) {
      for (let k = 0; k < 3; k++) await turn();
      mock.timers.tick(1000);
    }
    for (let k = 0; k < 3; k++) await turn();
    assert.ok(outcome?.error, `still running after 6 h: ${JSON.stringify(outcome)}`);
    assert.equal(outcome.error.code, "TIMEOUT");
    const requestsMade = sim.stats(jobUid).requests.total;
    console.log(`leaks: 6 h poll on a virtual clock: TIMEOUT after ${endedAt - t0} ms (maxDurationMs ${SIX_HOURS}), ${requestsMade} requests, ${rows.length} rows`);
    assert.equal(endedAt - t0, SIX_HOURS, "ended exactly at maxDurationMs");
    assert.deepEqual(rows, Array.from({ length: rows.length }, (_, i) => `row-${i}`));
    assert.ok(rows.length >= 3, `rows ${rows.length}`); // 40 rows over 60 h: 4 by the end (the 4th at 6 h exactly)
    // 10 s default interval: one results read per interval, and a status read after each poll
    // that brought nothing new (a slow run): about 2 × 2,160, never a busy loop.
    assert.ok(requestsMade > 2000 && requestsMade <= 2 * (SIX_HOURS / 10000) + 10, `requests ${requestsMade}`);
  } finally {
    mock.timers.reset();
  }
});
