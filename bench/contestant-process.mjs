// One contestant on one workload, alone in its own process (so `process.cpuUsage` and the
// heap are its own): `node --expose-gc bench/contestant-process.mjs <contestant>`, driven by
// bench/run.mjs over IPC. It records, per job, which rows reached the callback and when.
import { loadFactory } from "./contestants/index.mjs";

const id = process.argv[2];
const send = (message) => new Promise((resolve) => process.send(message, resolve));

/** Counts requests in flight, so the idle-memory probe knows every poller is asleep. */
function countFetches() {
  const counter = { inFlight: 0 };
  const real = globalThis.fetch;
  globalThis.fetch = (...args) => {
    counter.inFlight += 1;
    const settle = () => {
      counter.inFlight -= 1;
    };
    const promise = real(...args);
    promise.then(settle, settle);
    return promise;
  };
  return counter;
}

/** What one job's poller did: rows in callback order with times, the ending. */
function jobRecord(uid) {
  return { uid, indexes: [], times: [], seen: 0, statuses: 0, completedAt: null, error: null, summary: null };
}

/** Records a batch; a full-refetch contestant hands the whole list each time (`replace`). */
function recordBatch(record, batch) {
  const now = Date.now();
  const rows = batch.replace ? batch.results.slice(record.seen) : batch.results;
  record.seen = batch.replace ? batch.results.length : record.seen + rows.length;
  for (const row of rows) {
    record.indexes.push(row.index);
    record.times.push(now);
  }
}

const memory = () => {
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, rss: m.rss };
};

/** The library's wasm linear memory (held outside the JS heap), when the contestant has one. */
async function wasmMemoryBytes() {
  if (id !== "library") return 0;
  const { readFileSync } = await import("node:fs");
  const { PACKAGE_ROOT } = await import("./contestants/package.mjs");
  const glue = await import(new URL("pkg/captaindata_poller.js", PACKAGE_ROOT).href);
  // Already initialised by the package entry: initSync returns the same instance's exports.
  const exports = glue.initSync({ module: readFileSync(new URL("pkg/captaindata_poller_bg.wasm", PACKAGE_ROOT)) });
  return Object.values(exports).find((value) => value instanceof WebAssembly.Memory).buffer.byteLength;
}

/** Heap, external memory and wasm memory after a full GC; its own CPU is subtracted later. */
async function snapshot() {
  const cpu = process.cpuUsage();
  globalThis.gc();
  globalThis.gc();
  const taken = { ...memory(), wasm: await wasmMemoryBytes() };
  const spent = process.cpuUsage(cpu);
  return { taken, cpuMicros: spent.user + spent.system };
}

/** Resolves once every poller has read a status and nothing is in flight (all asleep). */
function whenIdle(records, counter, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const check = () => {
      const idle = counter.inFlight === 0 && records.every((r) => r.statuses > 0);
      if (idle || Date.now() - started > timeoutMs) return resolve(idle);
      setTimeout(check, 1);
    };
    check();
  });
}

/** Opens as many keep-alive connections as there are pollers, so the idle probe does not count sockets. */
async function warmConnections(origin, jobs) {
  await Promise.all(jobs.map((uid) => fetch(`${origin}/__sim/jobs/${encodeURIComponent(uid)}`).then((r) => r.arrayBuffer())));
}

async function run(go) {
  const create = await loadFactory(id);
  const counter = countFetches();
  const records = go.jobs.map(jobRecord);
  if (go.measureIdle) await warmConnections(go.origin, go.jobs);
  const before = go.measureIdle ? await snapshot() : null;
  const cpu0 = process.cpuUsage();
  const pollers = records.map((record) =>
    create({
      ...go.connection,
      ...go.options,
      jobUid: record.uid,
      calibrationJobUid: go.calibrationJobUid,
      onBatch: (batch) => recordBatch(record, batch),
      onStatus: () => {
        record.statuses += 1;
      },
    }),
  );
  const endings = pollers.map((poller, i) =>
    poller.start().then(
      (summary) => Object.assign(records[i], { completedAt: Date.now(), summary: { ...summary } }),
      (error) => Object.assign(records[i], { completedAt: Date.now(), error: String(error?.code ?? error?.message ?? error) }),
    ),
  );
  let idle = null;
  if (go.measureIdle) {
    const wasIdle = await whenIdle(records, counter, go.idleTimeoutMs);
    const after = await snapshot();
    idle = { idle: wasIdle, pollers: records.length, before: before.taken, after: after.taken, cpuMicros: after.cpuMicros };
  }
  await Promise.all(endings);
  const cpu = process.cpuUsage(cpu0);
  const cpuMicros = cpu.user + cpu.system - (idle?.cpuMicros ?? 0);
  // What a contestant measures once the run's own figures are taken (`pollStep`'s bare fetch).
  for (const [i, poller] of pollers.entries()) {
    if (poller.afterwards) records[i].summary = { ...records[i].summary, ...(await poller.afterwards()) };
  }
  for (const r of records) delete r.seen;
  await send({ type: "done", cpuMicros, idle, records });
  process.exit(0);
}

process.on("message", (message) => {
  if (message.type === "go") {
    run(message).catch(async (error) => {
      await send({ type: "failed", error: String(error?.stack ?? error) });
      process.exit(1);
    });
  }
});

/**
 * Node's `fetch` loads its HTTP client on first use and opens a socket: ≈50 ms, which at a
 * 1/100 time scale is 5 s of API time at the start of the run. Paid here, by every contestant
 * alike, before the parent creates the jobs. (`/__sim/*` requests are not in the job logs.)
 */
async function warmFetch(origin) {
  if (origin) await (await fetch(`${origin}/__sim/stats?job=warm-up`)).arrayBuffer();
}

// Load the contestant (and for the library, the wasm) before the parent creates the jobs.
await loadFactory(id);
await warmFetch(process.argv[3]);
globalThis.gc?.();
await send({ type: "ready" });
