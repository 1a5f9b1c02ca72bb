// From what the simulator saw and what a contestant's callbacks got, to the figures:
// requests and bytes, rows delivered (lost/duplicated), row and completion delays, CPU per
// 10,000 rows and per tick, memory per idle poller. Delays are in API time (real × scale).
import { makeRow } from "../sim/rows.js";
import { scaledOptions } from "./workloads.mjs";

/** The q-quantile (0..1) of sorted numbers, nearest rank; null when empty. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

function spread(values) {
  const sorted = Float64Array.from(values).sort();
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: quantile(sorted, 1) };
}

/**
 * When row `i` of a simulated job becomes readable (sim/jobs.js): linearly, or with the
 * first of `bursts` steps whose `floor(rows · k / bursts)` passes it, at `k · duration / bursts`.
 */
export function availableAt(job, i) {
  const { rows, durationMs, startDelayMs, arrival } = job.spec;
  const start = job.createdAt + startDelayMs;
  const bursts = arrival?.bursts;
  if (!bursts) return start + Math.ceil(((i + 1) * durationMs) / rows);
  const k = Math.ceil(((i + 1) * bursts) / rows);
  return start + Math.ceil((k * durationMs) / bursts);
}

/** Rows readable at time `t` (the inverse of availableAt). */
export function rowsAt(job, t) {
  const { rows, durationMs, startDelayMs, arrival } = job.spec;
  const ran = t - job.createdAt - startDelayMs;
  if (ran < 0) return 0;
  if (ran >= durationMs) return rows;
  const bursts = arrival?.bursts;
  if (!bursts) return Math.floor((rows * ran) / durationMs);
  return Math.floor((rows * Math.floor((bursts * ran) / durationMs)) / bursts);
}

/** Exactly-once and in-order check of one job's deliveries. */
function delivery(job, record) {
  const counts = new Uint32Array(job.spec.rows);
  let outOfOrder = 0;
  let previous = -1;
  let foreign = 0;
  for (const index of record.indexes) {
    if (!(index >= 0 && index < counts.length)) foreign += 1;
    else counts[index] += 1;
    if (index <= previous) outOfOrder += 1;
    previous = index;
  }
  let lost = 0;
  let duplicated = 0;
  for (const c of counts) {
    if (c === 0) lost += 1;
    if (c > 1) duplicated += c - 1;
  }
  return { delivered: record.indexes.length, lost, duplicated: duplicated + foreign, outOfOrder };
}

const encoder = new TextEncoder();

/** The rows' own bytes (their JSON), the floor for any reader of the results. */
function rowBytes(job) {
  let total = 0;
  for (let i = 0; i < job.spec.rows; i++) total += encoder.encode(JSON.stringify(makeRow(job.jobUid, i, job.spec.rowBytes))).length;
  return total;
}

function addCounts(into, from, sign = 1) {
  for (const key of ["total", "run", "results"]) into[key] += sign * from[key];
}

/**
 * Figures of one contestant on one workload, over its trials (one unless the workload asks
 * for more): requests, bytes, CPU and wall time are per trial (the mean), rows, completions,
 * delays and rounds are pooled over every trial.
 * @param {{ workload: object, contestant: object, trials: { sim: object, outcome: object,
 *   excluded?: string[], wallMs: number }[] }} input `sim` answers `stats(uid?)` and `job(uid)`
 */
export function figures({ workload, contestant, trials }) {
  const { scale } = workload;
  const requests = { total: 0, run: 0, results: 0 };
  const bytes = { total: 0, run: 0, results: 0 };
  const totals = { expected: 0, delivered: 0, lost: 0, duplicated: 0, outOfOrder: 0, rowBytes: 0 };
  const rowDelays = [];
  const completionDelays = [];
  const errors = new Map();
  let completed = 0;
  let jobs = 0;
  let cpuMicros = 0;
  let wallMs = 0;
  // Ticks: the interval grid over each run's life (start delay included); a step contestant's
  // rounds, with the CPU measured around each `pollStep`.
  const intervalMs = scaledOptions(workload).intervalMs;
  let ticks = 0;
  const roundCpu = [];
  const roundThread = [];
  const roundRequests = [];
  const roundBare = [];
  const roundBareThread = [];
  let calibration;
  for (const { sim, outcome, excluded = [], wallMs: wall } of trials) {
    const all = sim.stats();
    addCounts(requests, all.requests);
    addCounts(bytes, all.bytes);
    // Requests of runs outside the workload (the `pollStep` calibration) are not its cost.
    for (const uid of excluded) {
      const apart = sim.stats(uid);
      addCounts(requests, apart.requests, -1);
      addCounts(bytes, apart.bytes, -1);
    }
    cpuMicros += outcome.cpuMicros;
    wallMs += wall;
    jobs += outcome.records.length;
    for (const record of outcome.records) {
      const job = sim.job(record.uid);
      const d = delivery(job, record);
      totals.expected += job.spec.rows;
      totals.delivered += d.delivered;
      totals.lost += d.lost;
      totals.duplicated += d.duplicated;
      totals.outOfOrder += d.outOfOrder;
      totals.rowBytes += rowBytes(job);
      const firstSeen = new Set();
      record.indexes.forEach((index, k) => {
        if (firstSeen.has(index) || index >= job.spec.rows) return;
        firstSeen.add(index);
        rowDelays.push(Math.max(0, record.times[k] - availableAt(job, index)) * scale);
      });
      ticks += Math.max(1, (job.endsAt - job.createdAt) / intervalMs);
      if (record.summary?.roundCpuMicros) roundCpu.push(...record.summary.roundCpuMicros);
      if (record.summary?.roundThreadMicros) roundThread.push(...record.summary.roundThreadMicros);
      if (record.summary?.roundRequests) roundRequests.push(...record.summary.roundRequests);
      if (record.summary?.roundBareMicros) roundBare.push(...record.summary.roundBareMicros);
      if (record.summary?.roundBareThreadMicros) roundBareThread.push(...record.summary.roundBareThreadMicros);
      calibration ??= record.summary?.calibration;
      if (record.error) errors.set(record.error, (errors.get(record.error) ?? 0) + 1);
      else if (record.completedAt !== null) {
        completed += 1;
        completionDelays.push(Math.max(0, record.completedAt - job.endsAt) * scale);
      }
    }
  }
  const rows = totals.delivered - totals.duplicated;
  const cpuMs = cpuMicros / 1000;
  const n = trials.length;
  const perTrial = (counts) => Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / n]));
  return {
    contestant: contestant.id,
    label: contestant.label,
    trials: n,
    jobs,
    rows: { ...totals, exactlyOnce: totals.lost === 0 && totals.duplicated === 0 && totals.outOfOrder === 0 },
    completed,
    errors: Object.fromEntries(errors),
    requests: perTrial(requests),
    bytes: perTrial(bytes),
    bytesPerRowByte: bytes.total / totals.rowBytes,
    rowDelayMs: spread(rowDelays),
    completionDelayMs: spread(completionDelays),
    cpuMs: cpuMs / n,
    cpuMsPer10kRows: rows > 0 ? (cpuMs * 10_000) / rows : null,
    cpuMsPerTick: cpuMs / ticks,
    step: roundCpu.length > 0 ? stepFigures(roundCpu, roundThread, roundRequests, calibration, roundBare, roundBareThread) : undefined,
    // The idle-memory probe runs on single-trial workloads (the fleet).
    memory: trials[0].outcome.idle && idleMemory(trials[0].outcome.idle),
    wallMs: wallMs / n,
  };
}

/**
 * `pollStep` rounds: CPU (process, and its main thread where known), split by the requests a
 * round made, and Node's bare fetch + json() of a status and of a 1000-row page.
 */
function stepFigures(cpuMicros, threadMicros, requests, calibration, bareMicros = [], bareThreadMicros = []) {
  const ms = (list) => list.map((us) => us / 1000);
  // In workerd: what carrying a round in costs (a request that does nothing), taken off each.
  const carrying = calibration?.dispatchMicros && quantile(Float64Array.from(calibration.dispatchMicros).sort(), 0.5);
  /** The rounds whose request count `pick` keeps: their CPU, and against their replays. */
  const kind = (pick) => {
    const [rounds, bare] = [cpuMicros, bareMicros].map((list) => list.filter((_, i) => pick(requests[i] ?? 0)));
    return { rounds: rounds.length, cpuMs: spread(ms(rounds)), vsBare: againstBare(rounds, bare, carrying || 0).vsBare };
  };
  return {
    ...againstBare(cpuMicros, bareMicros, carrying || 0),
    rounds: cpuMicros.length,
    cpuMs: spread(ms(cpuMicros)),
    ...(carrying ? { dispatchMs: spread(ms(calibration.dispatchMicros)), ownCpuMs: spread(ms(cpuMicros.map((us) => Math.max(0, us - carrying)))) } : {}),
    meanCpuMs: cpuMicros.reduce((a, b) => a + b, 0) / cpuMicros.length / 1000,
    threadCpuMs: threadMicros.length === cpuMicros.length ? spread(ms(threadMicros)) : undefined,
    // The same on the main thread alone (Node): what V8's compiler and GC threads add is left out of both.
    threadVsBare: againstBare(threadMicros, bareThreadMicros, 0).vsBare,
    oneRequest: kind((n) => n <= 1),
    moreRequests: kind((n) => n > 1),
    bareFetch: calibration && { statusMs: spread(ms(calibration.statusMicros)), pageMs: spread(ms(calibration.pageMicros)) },
    // The package alone: a status round with no HTTP (in workerd, the carrying taken off).
    packageMs: calibration?.packageMicros && spread(ms(calibration.packageMicros.map((us) => Math.max(0, us - (carrying || 0))))),
    // Every round as measured (whole µs, nothing taken off), for a reader who wants more than a
    // p95: where the package's own cost goes, which rounds make the tail.
    series: { requests, roundMicros: cpuMicros.map(Math.round), bareMicros: bareMicros.map(Math.round) },
  };
}

/**
 * Each round beside its requests replayed bare half an interval after it (`fetch` + `json()`, the same
 * headers, in the same process or Worker; in workerd the carrying taken off both): the p95 of
 * each, their ratio, and the package's own cost per round (the round less its bare replay).
 * Both are measured on the same machine a moment apart, so the ratio holds from machine to
 * machine where a budget in milliseconds measured the machine.
 */
function againstBare(cpuMicros, bareMicros, carrying) {
  if (bareMicros.length !== cpuMicros.length || bareMicros.length === 0) return {};
  const own = (us) => Math.max(0, us - carrying) / 1000;
  const rounds = cpuMicros.map(own);
  const bare = bareMicros.map(own);
  const [roundMs, bareMs] = [spread(rounds), spread(bare)];
  return {
    vsBare: { roundMs, bareMs, ratioP95: bareMs.p95 > 0 ? roundMs.p95 / bareMs.p95 : null, packageOwnMs: spread(rounds.map((r, i) => r - bare[i])) },
  };
}

/** Per idle poller: JS heap growth plus wasm linear memory growth, after a full GC. */
function idleMemory({ idle, pollers, before, after }) {
  const heap = (after.heapUsed - before.heapUsed) / pollers;
  const external = (after.external - before.external) / pollers;
  const wasm = (after.wasm - before.wasm) / pollers;
  return { idle, pollers, heapBytes: heap, externalBytes: external, wasmBytes: wasm, perPollerBytes: heap + Math.max(wasm, 0) };
}

/**
 * Cumulative requests and bytes against rows readable at the time, from the simulator's log
 * of one job; at most `points` points.
 */
export function costCurve(job, log, points = 200) {
  const curve = [];
  let requests = 0;
  let bytes = 0;
  const every = Math.max(1, Math.ceil(log.length / points));
  log.forEach((entry, k) => {
    if (entry.kind === "preflight") return;
    requests += 1;
    bytes += entry.bytes;
    if (k % every === 0 || k === log.length - 1) curve.push({ rows: rowsAt(job, entry.t), requests, bytes });
  });
  return curve;
}
