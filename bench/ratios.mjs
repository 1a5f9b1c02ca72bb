// The ratios the performance targets are stated in, side by side with their targets, and
// every figure of the package that got worse than the reference run's (a full run kept in
// results/reference.json) by more than the noise allowed, each with the line that says why.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { WORSE_BECAUSE } from "./worse-because.mjs";

const REFERENCE = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "reference.json");
/** A figure may be this much worse than the reference's before it needs a reason. */
export const WORSE = 1.05;

export function loadReference() {
  return existsSync(REFERENCE) ? JSON.parse(readFileSync(REFERENCE, "utf8")) : null;
}

const find = (report, w, c) => report?.results.find((r) => r.workload === w && r.contestant === c);
const fixed = (x, digits = 2) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(digits));

/**
 * The rows of the ratio table: { workload, figure, value, reference, ratio, target, ok }.
 * `value` and `reference` are display strings; `ratio` a number.
 */
export function targetRatios(report, fmt) {
  const rows = [];
  const add = (workload, figure, value, reference, ratio, limit, targetText) =>
    rows.push({ workload, figure, value, reference, ratio, target: targetText ?? `≤ ${limit}×`, ok: ratio !== null && ratio <= limit });
  for (const w of ["small", "one-page"]) {
    const lib = find(report, w, "library");
    const seed = find(report, w, "seed");
    if (!lib || !seed) continue;
    add(w, "bytes vs the seed's loop", fmt.mb(lib.bytes.total), fmt.mb(seed.bytes.total), lib.bytes.total / seed.bytes.total, 1);
    add(w, "requests vs the seed's loop", fmt.num(lib.requests.total), fmt.num(seed.requests.total), lib.requests.total / seed.requests.total, 1);
    add(w, "p95 row delay vs the seed's loop", `${fmt.secs(lib.rowDelayMs.p95)} s`, `${fmt.secs(seed.rowDelayMs.p95)} s`, lib.rowDelayMs.p95 / seed.rowDelayMs.p95, 1.1);
  }
  for (const w of ["bursty-lag", "bursty-lag2"]) {
    const lib = find(report, w, "library");
    const inc = find(report, w, "incremental");
    if (!lib || !inc) continue;
    add(w, "p95 row delay vs the every-tick reader", `${fmt.secs(lib.rowDelayMs.p95)} s`, `${fmt.secs(inc.rowDelayMs.p95)} s`, lib.rowDelayMs.p95 / inc.rowDelayMs.p95, 1.5);
    add(w, "bytes vs the every-tick reader", fmt.mb(lib.bytes.total), fmt.mb(inc.bytes.total), lib.bytes.total / inc.bytes.total, 0.3);
  }
  for (const w of PHYSICAL_LIMIT_WORKLOADS) {
    const lib = find(report, w, "library");
    const spec = report.workloads?.find((x) => x.id === w)?.spec;
    const limit = spec && physicalLimit(spec);
    if (!lib || !limit) continue;
    const figure = "bytes vs the physical limit (rows' bytes + one re-read of each burst's partly filled page)";
    add(w, figure, `${fixed(lib.bytesPerRowByte)}× rows' bytes`, `${fixed(limit)}×`, lib.bytesPerRowByte / limit, PHYSICAL_LIMIT_RATIO);
    const inc = find(report, w, "incremental");
    if (inc) add(w, "p95 row delay vs the every-tick reader", `${fixed(lib.rowDelayMs.p95 / 1000, 1)} s`, `${fixed(inc.rowDelayMs.p95 / 1000, 1)} s`, lib.rowDelayMs.p95 / inc.rowDelayMs.p95, 1.1);
  }
  for (const { id, where } of STEP_CONTESTANTS) {
    const against = find(report, "bursty", id)?.step?.vsBare;
    if (!against) continue;
    const figure = `\`pollStep\` p95 CPU per round vs a bare replay of its requests, ${where}`;
    add("bursty", figure, `${fixed(against.roundMs.p95)} ms`, `${fixed(against.bareMs.p95)} ms`, against.ratioP95, STEP_CPU_RATIO);
  }
  return rows;
}

/** The workloads whose bytes are held to the physical limit: the bench's bursty, and 100-row bursts well apart. */
export const PHYSICAL_LIMIT_WORKLOADS = ["bursty", "bursty-100"];
/** How far above the physical limit their bytes may be. */
export const PHYSICAL_LIMIT_RATIO = 1.15;

/**
 * The least a reader of a run that arrives in bursts downloads, as a multiple of the rows'
 * bytes: each row once, and each burst's page as it stood before the burst once more (the
 * partly filled page is read again to reach the new rows). Full pages read again to learn
 * `paging.next`, statuses and the JSON around the rows are above it. `null` for linear runs.
 * @param {{ rows: number, pageSize: number, arrival?: "linear" | { bursts: number } }} spec
 */
export function physicalLimit({ rows, pageSize, arrival }) {
  const bursts = typeof arrival === "object" ? arrival.bursts : 0;
  if (!bursts || !rows) return null;
  let reread = 0;
  // Burst k brings rows floor(rows·(k−1)/bursts) up to floor(rows·k/bursts) (sim/jobs.js).
  for (let k = 1; k <= bursts; k++) reread += Math.floor((rows * (k - 1)) / bursts) % pageSize;
  return (rows + reread) / rows;
}

/**
 * `pollStep`'s CPU is stated against the runtime's own: each round beside a bare replay of its
 * requests (`fetch` + `json()`, the same headers) made half an interval after it in the same process or
 * Worker. The budgets in milliseconds it replaced (3 ms workerd, 5 ms Node) measured the
 * machine: on the shared 2-core machine the bare replay alone cost more than them.
 */
export const STEP_CPU_RATIO = 1.2;
export const STEP_CONTESTANTS = [
  { id: "library-step-workerd", runtime: "workerd", where: "in workerd, where a cron Worker runs it" },
  { id: "library-step", runtime: "Node", where: "in Node" },
];

/**
 * Where a `pollStep` round's CPU goes on `bursty`: the main thread's share, rounds of one
 * request (the status) against rounds that also read results, and Node's bare fetch.
 */
export function stepCpuLine(report) {
  const step = find(report, "bursty", "library-step")?.step;
  if (!step?.moreRequests) return null;
  const p = (spread) => `${fixed(spread?.p50)} / ${fixed(spread?.p95)} ms`;
  const threadRatio = step.threadVsBare?.ratioP95 ? `, against ${p(step.threadVsBare.bareMs)} for its replay, p95 ratio ${step.threadVsBare.ratioP95.toFixed(2)}×` : "";
  const thread = step.threadCpuMs ? `; main thread alone ${p(step.threadCpuMs)}${threadRatio} (the rest is V8's compiler and GC threads)` : "";
  const bare = step.bareFetch ? `; a bare Node \`fetch\` + \`json()\` in the same process costs ${p(step.bareFetch.statusMs)} for a status and ${p(step.bareFetch.pageMs)} for a 1000-row page` : "";
  const alone = (st) => (st.packageMs ? `; the package alone (a status round whose \`fetch\` answers a parsed status at once, no HTTP) ${p(st.packageMs)}` : "");
  const own = (st) => (st.vsBare ? `; its requests replayed bare half an interval after each round ${p(st.vsBare.bareMs)}, the package's own cost per round (the round less its replay) ${p(st.vsBare.packageOwnMs)}` : "");
  const node = `\`pollStep\` CPU per round on bursty in Node, p50 / p95: all ${step.rounds} rounds ${p(step.cpuMs)}${own(step)}${thread}; the ${step.oneRequest.rounds} rounds of one request (the status) ${p(step.oneRequest.cpuMs)}, the ${step.moreRequests.rounds} that also read results ${p(step.moreRequests.cpuMs)}${bare}${alone(step)}.`;
  const w = find(report, "bursty", "library-step-workerd")?.step;
  if (!w?.moreRequests) return node;
  const wBare = w.bareFetch ? `; in the same Worker a bare \`fetch\` + \`json()\` costs ${p(w.bareFetch.statusMs)} for a status and ${p(w.bareFetch.pageMs)} for a 1000-row page` : "";
  const carry = w.dispatchMs ? `; carrying a request in (a request that does nothing) ${p(w.dispatchMs)}, its median taken off each round: ${p(w.ownCpuMs)}` : "";
  return `${node} In workerd (every thread of its process): all ${w.rounds} rounds ${p(w.cpuMs)}${carry}${own(w)}; the ${w.oneRequest.rounds} rounds of one request ${p(w.oneRequest.cpuMs)}, the ${w.moreRequests.rounds} that also read results ${p(w.moreRequests.cpuMs)}${wBare}${w.packageMs ? `${alone(w)}, the carrying taken off` : ""}.`;
}

/** The ratio table, markdown. */
export function ratioTable(report, fmt) {
  const lines = ["| workload | figure | package | against | ratio | target | met |", "| --- | --- | --- | --- | --- | --- | --- |"];
  for (const r of targetRatios(report, fmt)) {
    lines.push(`| ${r.workload} | ${r.figure} | ${r.value} | ${r.reference} | ${fixed(r.ratio, 3)}× | ${r.target} | ${r.ok ? "✅ met" : "❌ not met"} |`);
  }
  return lines.join("\n");
}

/** The package's figures compared with the reference run: name, how to read it, display. */
const FIGURES = [
  ["requests", (r) => r.requests.total, (x) => `${Math.round(x)}`],
  ["bytes", (r) => r.bytes.total, (x) => `${fixed(x / 1e6, 2)} MB`],
  ["p95 row delay", (r) => r.rowDelayMs.p95, (x) => `${fixed(x / 1000, 1)} s`],
  ["end → complete", (r) => (r.jobs > 1 ? r.completionDelayMs.p95 : r.completionDelayMs.max), (x) => `${fixed(x / 1000, 1)} s`],
  ["CPU per tick", (r) => (r.step ? r.step.meanCpuMs : r.cpuMsPerTick), (x) => `${fixed(x)} ms`],
  ["p95 CPU per round", (r) => r.step?.cpuMs.p95, (x) => `${fixed(x)} ms`],
  ["memory per idle poller", (r) => r.memory?.perPollerBytes, (x) => `${fixed(x / 1000, 1)} KB`],
];

/** Every figure of the package (and its `pollStep`) worse than WORSE × the reference's. */
export function worseThanReference(report, reference = loadReference()) {
  if (!reference) return [];
  const out = [];
  for (const now of report.results.filter((r) => r.contestant === "library" || r.contestant === "library-step")) {
    const before = find(reference, now.workload, now.contestant);
    if (!before) continue;
    for (const [figure, read, show] of FIGURES) {
      const [a, b] = [read(now), read(before)];
      if (a === undefined || b === undefined || a === null || b === null || !(a > b * WORSE)) continue;
      const key = `${now.workload} / ${now.contestant} / ${figure}`;
      out.push({ key, now: show(a), before: show(b), ratio: a / b, why: WORSE_BECAUSE[key] });
    }
  }
  return out;
}

/** The lines of the report that list those figures, each with its reason (or none given). */
export function worseLines(report, reference = loadReference()) {
  if (!reference) return ["No reference run (results/reference.json): nothing compared."];
  const worse = worseThanReference(report, reference);
  const head = `Against the reference run of ${reference.date.slice(0, 10)} (load ${fixed(reference.load?.before)} → ${fixed(reference.load?.after)}; this run ${fixed(report.load?.before)} → ${fixed(report.load?.after)}): ${worse.length === 0 ? `no figure of the package is worse than ${WORSE}× its value then.` : `figures of the package worse than ${WORSE}× their value then, and why:`}`;
  return [head, "", ...worse.map((w) => `- ${w.why ? "" : "**no reason given:** "}${w.key}: ${fixed(w.ratio)}× (${w.now} vs ${w.before})${w.why ? ` — ${w.why}` : ""}`)];
}
