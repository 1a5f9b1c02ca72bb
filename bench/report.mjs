// The bench's outputs for humans: the markdown table (stdout, latest.md, README) with the
// targets checked, and a hand-written SVG of requests and bytes against rows.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PHYSICAL_LIMIT_RATIO, PHYSICAL_LIMIT_WORKLOADS, STEP_CONTESTANTS, STEP_CPU_RATIO, physicalLimit, ratioTable, stepCpuLine, worseLines } from "./ratios.mjs";
import { INTERVAL_MS } from "./workloads.mjs";

const LIBRARY = "library";
const STEP = "library-step";
const STEP_WORKERD = "library-step-workerd";
const INCREMENTAL = "incremental";
/** The library's figures before status-guided reads, on the workloads it was measured on then. */
const BASELINE = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "baseline.json");
/** Run-to-run noise allowed against the baseline. */
const NOISE = 1.05;

function loadBaseline() {
  return existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, "utf8")) : null;
}
/** "Equal" p95 delay: within the run-to-run spread of that figure on the bench machine (≈ 3 %). */
const DELAY_TOLERANCE = 1.05;
/** The bindings measured by bindings-big-run.mjs. */
const BINDINGS = ["react", "vue"];
/**
 * "The same" per-batch cost with many rows held as with few: an O(n) copy of the rows per batch
 * measured 1.25–1.7× on a machine at load 5 (bench/bindings-big-run.mjs), the bindings as they
 * are 0.9–1.05×.
 */
const BINDINGS_RATIO = 1.2;
/** How a workload of several trials is measured (see bench/README.md). */
const trialsNote = (w) =>
  w.trials > 1
    ? ` ${w.trials} runs per contestant, each polled from 1/${w.trials} of an interval later than the one before: requests, bytes and CPU per run (the mean), delays over every run's rows.`
    : "";

/** A count; a mean over trials below 100 keeps one decimal (13.4 requests per run). */
const num = (n) => {
  if (n === null || n === undefined) return "–";
  return !Number.isInteger(n) && n < 100 ? n.toFixed(1) : Math.round(n).toLocaleString("en-US");
};
const secs = (ms) => (ms === null || ms === undefined ? "–" : (ms / 1000).toFixed(1));
const kb = (b) => (b === null || b === undefined ? "–" : `${(b / 1000).toFixed(1)} KB`);
const mb = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : kb(b));
const ratio = (value, base) => (value === null || base === null || !base ? "–" : `${(value / base).toFixed(value / base >= 10 ? 0 : 2)}×`);

function rowsCell(r) {
  const { rows } = r;
  const problems = [];
  if (rows.lost) problems.push(`**${num(rows.lost)} lost**`);
  if (rows.duplicated) problems.push(`**${num(rows.duplicated)} duplicated**`);
  if (rows.outOfOrder) problems.push(`**${num(rows.outOfOrder)} out of order**`);
  const failed = Object.entries(r.errors).map(([e, n]) => `**${n} failed: ${e}**`);
  const ok = problems.length === 0 && failed.length === 0;
  return `${num(rows.delivered - rows.duplicated)} / ${num(rows.expected)} ${ok ? "✓" : [...problems, ...failed].join(", ")}`;
}

function line(r, base) {
  const d = r.rowDelayMs;
  const c = r.completionDelayMs;
  const memory = r.memory ? `${kb(r.memory.perPollerBytes)}${r.memory.idle ? "" : " (not idle)"}` : "";
  return [
    r.workload,
    r.label,
    `${num(r.requests.total)} (${num(r.requests.run)} + ${num(r.requests.results)})`,
    ratio(r.requests.total, base?.requests.total),
    mb(r.bytes.total),
    ratio(r.bytes.total, base?.bytes.total),
    r.bytesPerRowByte.toFixed(2),
    rowsCell(r),
    `${secs(d.p50)} / ${secs(d.p95)} / ${secs(d.max)}`,
    r.jobs > 1 ? `${secs(c.p95)} (p95)` : secs(c.max),
    r.cpuMsPer10kRows === null ? "–" : num(r.cpuMsPer10kRows),
    ratio(r.cpuMsPer10kRows, base?.cpuMsPer10kRows),
    r.step ? `${r.step.meanCpuMs.toFixed(2)} (p95 ${r.step.cpuMs.p95.toFixed(2)}, ${num(r.step.rounds)} rounds)` : r.cpuMsPerTick.toFixed(2),
    memory,
  ];
}

const HEADER = [
  "workload",
  "contestant",
  "requests (run + results)",
  "× 1",
  "bytes",
  "× 1",
  "bytes ÷ rows' bytes",
  "rows delivered",
  "row delay p50 / p95 / max (s)",
  "end → complete (s)",
  "CPU ms / 10k rows",
  "× 1",
  "CPU ms / tick",
  "memory / idle poller",
];

/** Each target with where this run stands. */
export function targets(report, baseline = loadBaseline()) {
  const get = (w, c) => report.results.find((r) => r.workload === w && r.contestant === c);
  const out = [];
  const check = (name, ok, detail) => out.push({ name, ok, detail });
  const spec = (w) => report.workloads.find((x) => x.id === w)?.spec ?? {};
  // Runs of 1000-row pages whose rows come in bursts: read a page only when it changed.
  // Small runs: never worse than the seed's loop (bytes, requests; p95 row delay within 1.1×).
  for (const w of ["small", "one-page"]) {
    const lib = get(w, LIBRARY);
    const seed = get(w, "seed");
    if (!lib || !seed) continue;
    const b = lib.bytes.total / seed.bytes.total;
    const q = lib.requests.total / seed.requests.total;
    const d = lib.rowDelayMs.p95 / seed.rowDelayMs.p95;
    const detail = `${b.toFixed(2)}× bytes (${mb(lib.bytes.total)} vs ${mb(seed.bytes.total)}), ${q.toFixed(2)}× requests (${num(lib.requests.total)} vs ${num(seed.requests.total)}), p95 ${d.toFixed(2)}× (${secs(lib.rowDelayMs.p95)} vs ${secs(seed.rowDelayMs.p95)} s)`;
    check(`${w}: bytes and requests ≤ the seed's loop, p95 row delay ≤ 1.1× its own`, b <= 1 && q <= 1 && d <= 1.1, detail);
  }
  // A lagging count must not make rows wait: against the reader of every tick.
  for (const w of ["bursty-lag", "bursty-lag2"]) {
    const lib = get(w, LIBRARY);
    const inc = get(w, INCREMENTAL);
    if (!lib || !inc) continue;
    const b = lib.bytes.total / inc.bytes.total;
    const d = lib.rowDelayMs.p95 / inc.rowDelayMs.p95;
    const detail = `p95 ${d.toFixed(2)}× (${secs(lib.rowDelayMs.p95)} vs ${secs(inc.rowDelayMs.p95)} s), ${b.toFixed(2)}× bytes (${mb(lib.bytes.total)} vs ${mb(inc.bytes.total)})`;
    check(`${w}: p95 row delay ≤ 1.5×, bytes ≤ 0.3× the hand-written incremental poller (reads every tick)`, d <= 1.5 && b <= 0.3, detail);
  }
  const big = report.demoBigRun;
  if (big) {
    const cpu = big.cpuOver50ms === undefined ? "" : ` (by the tasks' own CPU time ${big.cpuOver50ms} over 50 ms, the longest ${big.longestCpuMs} ms; load average ${big.load.before.toFixed(1)})`;
    const detail = `${big.longTasks} long tasks, the longest ${big.longestTaskMs} ms${cpu}; at most ${big.mostRowsInDom} <tr>s; ${big.held} of ${big.rows} rows held`;
    check("demo-big-run: no long task over 50 ms while 50,000 rows arrive, the DOM holds at most a few hundred rows", big.longTasks === 0 && big.mostRowsInDom <= 300 && big.held === big.rows, detail);
  }
  const bindings = report.bindingsBigRun;
  if (bindings) {
    const sides = BINDINGS.map((f) => `${f} ${bindings[f].ratio}× (${bindings[f].low.lowerQuartileMs} → ${bindings[f].high.lowerQuartileMs} ms)`).join(", ");
    const shown = BINDINGS.every((f) => bindings[f].shown === bindings.rows);
    check(
      `bindings-big-run: a batch costs the React and Vue bindings the same with ${num(bindings.rows * 0.8)}+ rows held as with at most ${num(bindings.rows * 0.2)} (≤ ${BINDINGS_RATIO}×), every row shown`,
      shown && BINDINGS.every((f) => bindings[f].ratio <= BINDINGS_RATIO),
      sides,
    );
  }
  for (const { id, runtime } of STEP_CONTESTANTS) {
    const against = get("bursty", id)?.step?.vsBare;
    if (!against) continue;
    const detail = `${against.ratioP95?.toFixed(2)}× (p95 ${against.roundMs.p95.toFixed(2)} ms a round, ${against.bareMs.p95.toFixed(2)} ms its replay; the package's own p50 / p95 ${against.packageOwnMs.p50.toFixed(2)} / ${against.packageOwnMs.p95.toFixed(2)} ms)`;
    check(`bursty (pollStep in ${runtime}): p95 CPU per round ≤ ${STEP_CPU_RATIO}× a bare replay of its requests`, against.ratioP95 !== null && against.ratioP95 <= STEP_CPU_RATIO, detail);
  }
  // Bursty reads against the least any reader downloads (ratios.mjs `physicalLimit`).
  for (const w of PHYSICAL_LIMIT_WORKLOADS) {
    const lib = get(w, LIBRARY);
    const limit = physicalLimit(spec(w));
    if (!lib || !limit) continue;
    const r = lib.bytesPerRowByte / limit;
    check(`${w}: bytes ≤ ${PHYSICAL_LIMIT_RATIO}× the physical limit (${limit.toFixed(2)}× the rows' bytes)`, r <= PHYSICAL_LIMIT_RATIO, `${lib.bytesPerRowByte.toFixed(2)}× the rows' bytes, ${r.toFixed(3)}× the limit`);
  }
  for (const w of ["bursty", "bursty-lag"]) {
    const lib = get(w, LIBRARY);
    const inc = get(w, INCREMENTAL);
    if (!lib || !inc) continue;
    const b = lib.bytes.total / inc.bytes.total;
    const q = lib.requests.total / inc.requests.total;
    const d = lib.rowDelayMs.p95 / inc.rowDelayMs.p95;
    const detail = `${b.toFixed(2)}× bytes (${mb(lib.bytes.total)} vs ${mb(inc.bytes.total)}), ${q.toFixed(2)}× requests (${num(lib.requests.total)} vs ${num(inc.requests.total)}), p95 ${secs(lib.rowDelayMs.p95)} vs ${secs(inc.rowDelayMs.p95)} s (${d.toFixed(2)}×)`;
    if (w === "bursty") {
      check(`${w}: bytes ≤ 0.2×, requests ≤ 0.7× the hand-written incremental poller, p95 row delay ≤ 1.1× its own`, b <= 0.2 && q <= 0.7 && d <= 1.1, detail);
    } else {
      // A count that lags delays the read that it guides: the delay is reported, not held.
      check(`${w}: bytes ≤ 0.2×, requests ≤ 0.7× the hand-written incremental poller (row delay: see the table)`, b <= 0.2 && q <= 0.7, detail);
    }
  }
  for (const w of ["medium", "large"]) {
    const lib = get(w, LIBRARY);
    const seed = get(w, "seed");
    if (lib && seed) {
      const b = seed.bytes.total / lib.bytes.total;
      const q = seed.requests.total / lib.requests.total;
      const model = seed.model
        ? ` (seed at an exact 10 s cadence, simulator's model: ${(seed.model.bytes / lib.bytes.total).toFixed(1)}× bytes, ${(seed.model.requests / lib.requests.total).toFixed(1)}× requests)`
        : "";
      check(`${w}: ≥ 10× fewer bytes and ≥ 3× fewer requests than the seed's loop`, b >= 10 && q >= 3, `${b.toFixed(1)}× bytes, ${q.toFixed(1)}× requests${model}`);
    }
  }
  // The workloads measured before status-guided reads: no worse than then (± noise).
  for (const before of baseline?.results.filter((r) => r.contestant === LIBRARY) ?? []) {
    const now = get(before.workload, LIBRARY);
    if (!now) continue;
    const within = (a, b) => a <= b * NOISE;
    const ok = within(now.requests.total, before.requests.total) && within(now.bytes.total, before.bytes.total) && within(now.rowDelayMs.p95, before.rowDelayMs.p95);
    check(
      `${now.workload}: requests, bytes, p95 row delay ≤ the library's of ${baseline.date.slice(0, 10)} (results read on every tick) + 5 %`,
      ok,
      `${num(now.requests.total)} vs ${num(before.requests.total)} requests, ${mb(now.bytes.total)} vs ${mb(before.bytes.total)}, p95 ${secs(now.rowDelayMs.p95)} vs ${secs(before.rowDelayMs.p95)} s`,
    );
  }
  for (const r of report.results.filter((x) => [LIBRARY, STEP, STEP_WORKERD].includes(x.contestant))) {
    const who = { [STEP]: " (pollStep)", [STEP_WORKERD]: " (pollStep in workerd)" }[r.contestant] ?? "";
    const clean = r.rows.exactlyOnce && Object.keys(r.errors).length === 0 && r.completed === r.jobs;
    check(`${r.workload}${who}: every row exactly once, in order, and completion`, clean, rowsCell(r));
    const end = r.jobs > 1 ? r.completionDelayMs.p95 : r.completionDelayMs.max;
    check(`${r.workload}${who}: completion within one interval of the run's end`, end !== null && end <= INTERVAL_MS, `${secs(end)} s${r.jobs > 1 ? " (p95)" : ""}`);
    if (r.contestant !== LIBRARY) continue;
    const lag = spec(r.workload).countLagMs ?? 0;
    const bound = 1.1 * INTERVAL_MS + lag;
    const what = lag ? `the count's lag + 1.1 × interval (${secs(bound)} s)` : `1.1 × interval (${secs(bound)} s)`;
    check(`${r.workload}: p95 row delay ≤ ${what}`, r.rowDelayMs.p95 <= bound, `${secs(r.rowDelayMs.p95)} s`);
    const inc = get(r.workload, INCREMENTAL);
    // Below a few thousand rows, fixed costs (first fetch, JIT) dominate the per-row figure.
    if (inc && r.rows.expected >= 2000) {
      const cpu = r.cpuMsPer10kRows / inc.cpuMsPer10kRows;
      check(`${r.workload}: CPU per 10k rows ≤ 1.3× the hand-written poller`, cpu <= 1.3, `${cpu.toFixed(2)}×`);
    }
    if (r.memory) check(`${r.workload}: memory ≤ 10 KB per idle poller`, r.memory.perPollerBytes <= 10_000, `${kb(r.memory.perPollerBytes)} (heap ${kb(r.memory.heapBytes)} + wasm ${kb(r.memory.wasmBytes)})`);
  }
  const s = report.size;
  // DESIGN §6: what a page downloads, ≤ 45 KB gzipped, 40 KB the goal.
  if (s && !s.error) {
    const brotli = s.totalBrotli === undefined ? "" : `; brotli ${kb(s.totalBrotli)}`;
    const parts = `wasm ${kb(s.wasmGzip)} + ${s.jsGzip === undefined ? `glue ${kb(s.glueGzip)} + entry ${kb(s.entryGzip)}` : `JS ${kb(s.jsGzip)}`}${brotli}`;
    check("shipped wasm + glue + entry ≤ 45 KB gzipped (40 KB goal)", s.totalGzip <= 45_000, `${kb(s.totalGzip)} (${parts})`);
  }
  return out;
}

const SUMMARY = [LIBRARY, STEP, STEP_WORKERD, INCREMENTAL, "seed"];

/** The short table the README quotes: the package against the hand-written poller and the seed. */
export function summaryTable(report) {
  const lines = [
    "| workload | contestant | requests | bytes (÷ rows' bytes) | row delay p50 / p95 (s) | end → complete (s) | CPU ms / tick |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const w of report.workloads) {
    for (const id of SUMMARY) {
      const r = report.results.find((x) => x.workload === w.id && x.contestant === id);
      if (!r) continue;
      const cpu = r.step ? `${r.step.meanCpuMs.toFixed(2)} per round` : r.cpuMsPerTick.toFixed(2);
      const end = r.jobs > 1 ? `${secs(r.completionDelayMs.p95)} (p95)` : secs(r.completionDelayMs.max);
      const ok = r.rows.exactlyOnce && Object.keys(r.errors).length === 0 ? "" : " ⚠";
      lines.push(
        `| ${w.id} | ${r.label}${ok} | ${num(r.requests.total)} | ${mb(r.bytes.total)} (${r.bytesPerRowByte.toFixed(1)}×) | ${secs(r.rowDelayMs.p50)} / ${secs(r.rowDelayMs.p95)} | ${end} | ${cpu} |`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The table the README quotes, with the machine, the date and the targets. */
export function markdownTable(report) {
  const m = report.machine;
  const lines = [
    `Bench of ${report.date.slice(0, 10)} on ${m.cpu} (${m.cores} cores, ${m.memoryGB} GB), ${m.os}, Node ${m.node}.`,
    `Times are API time (the run scaled ${report.workloads.map((w) => `${w.id} 1/${w.scale}`).join(", ")}); interval 10 s for every contestant; bytes are response bodies.`,
    "CPU is `process.cpuUsage` of the contestant's own process (one at a time); per tick: ÷ the run's length in intervals, and for `pollStep` measured around each round (mean, p95). Memory is JS heap + wasm memory growth per poller, all 1,000 asleep, after a full GC, connection pool warmed first.",
    ...(report.load ? [`Load average (1 min) before the bench: ${report.load.before.toFixed(2)}, after: ${report.load.after.toFixed(2)}.`] : []),
    "",
    "Workloads:",
    "",
    ...report.workloads.map((w) => `- \`${w.id}\`: ${w.what}.${trialsNote(w)}`),
    "",
    "In short (the package, its `pollStep`, the hand-written incremental poller, the seed's loop):",
    "",
    summaryTable(report),
    "Every contestant:",
    "",
    `| ${HEADER.join(" | ")} |`,
    `| ${HEADER.map(() => "---").join(" | ")} |`,
  ];
  for (const w of report.workloads) {
    const rows = report.results.filter((r) => r.workload === w.id);
    const base = rows.find((r) => r.contestant === LIBRARY);
    for (const r of rows) lines.push(`| ${line(r, base).join(" | ")} |`);
  }
  const s = report.size;
  lines.push("", s && !s.error ? `Shipped size: ${kb(s.totalGzip)} gzipped${s.totalBrotli === undefined ? "" : `, ${kb(s.totalBrotli)} brotli`} (wasm ${kb(s.wasmGzip)} + ${s.jsGzip === undefined ? `glue ${kb(s.glueGzip)} + entry ${kb(s.entryGzip)}` : `JS ${kb(s.jsGzip)}`}, gzip).` : `Shipped size: not measured (${s?.error}).`);
  lines.push("", "The ratios of the performance targets, side by side (this run):", "", ratioTable(report, { mb, num, secs }));
  const stepCpu = stepCpuLine(report);
  if (stepCpu) lines.push("", stepCpu);
  const big = report.demoBigRun;
  if (big) {
    lines.push(
      "",
      `The demo page with a big run (\`demo-big-run\`: ${num(big.rows)} rows over ${big.durationS} s, polled every ${big.intervalMs / 1000} s, headless Chromium): ` +
        `${big.longTasks} long tasks (> 50 ms) while the rows arrived, the longest ${big.longestTaskMs} ms, ${big.over100ms} over 100 ms; ` +
        `at most ${big.mostRowsInDom} \`<tr>\`s in the table (windowed); ${num(big.held)} rows held.` +
        (big.cpuOver50ms === undefined
          ? ""
          : ` By each task's own CPU time (the wall-clock figures count the time another process held the CPU, load average ${big.load.before.toFixed(1)}): ` +
            `${big.cpuOver50ms} over 50 ms, the longest ${big.longestCpuMs} ms; ${num(big.mainThreadCpuMs)} ms of main-thread CPU in all.`),
    );
  }
  const bindings = report.bindingsBigRun;
  if (bindings) {
    const side = (s) => `${s.lowerQuartileMs} ms with ${num(s.heldFrom)}–${num(s.heldTo)} rows held`;
    const each = BINDINGS.map((f) => `${f} ${side(bindings[f].low)}, ${side(bindings[f].high)} (${bindings[f].ratio}×)`).join("; ");
    lines.push(
      "",
      `The bindings with a big run (\`bindings-big-run\`: useJobPoller in React and Vue, production builds, ${num(bindings.rows)} rows in batches of ${bindings.pageSize}, ` +
        `${bindings.trials} runs each, headless Chromium, load average ${bindings.load.before.toFixed(1)}): what a batch costs from the binding's taking it to the framework's commit, ` +
        `the lower quartile: ${each}.`,
    );
  }
  lines.push("", ...worseLines(report));
  lines.push("", "Targets:", "");
  for (const t of targets(report)) lines.push(`- ${t.ok ? "✅" : "❌"} ${t.name}: ${t.detail}`);
  return `${lines.join("\n")}\n`;
}

// ---- SVG chart: 2 × 2 panels (bursty, large) × (requests, bytes), log y axis. ----

const COLORS = { library: "#1b7f3b", "library-step": "#7fbf3b", "library-step-workerd": "#b5d96b", seed: "#c0392b", "seed-as-written": "#e39b8f", refetch: "#8e44ad", incremental: "#2266bb" };
const W = 460;
const H = 300;
const PAD = { left: 64, right: 16, top: 34, bottom: 40 };
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");

function ticks(min, max) {
  const out = [];
  for (let p = min; p <= max; p *= 10) out.push(p);
  return out;
}

/** Series drawn dashed so a line under them stays visible (the library under the hand-written). */
const DASHED = new Set(["incremental"]);

function panel(x0, y0, title, series, key, maxRows) {
  const minY = key === "bytes" ? 1000 : 1;
  const maxY = Math.max(minY * 10, ...series.flatMap((s) => s.curve.map((p) => p[key])));
  const sx = (rows) => x0 + PAD.left + (rows / maxRows) * (W - PAD.left - PAD.right);
  const span = Math.log10(maxY / minY);
  const sy = (v) => y0 + H - PAD.bottom - (Math.log10(Math.max(minY, v) / minY) / span) * (H - PAD.top - PAD.bottom);
  const parts = [`<text x="${x0 + W / 2}" y="${y0 + 20}" text-anchor="middle" font-weight="bold">${esc(title)}</text>`];
  for (const t of ticks(minY, maxY)) {
    parts.push(`<line x1="${x0 + PAD.left}" x2="${x0 + W - PAD.right}" y1="${sy(t)}" y2="${sy(t)}" stroke="#ddd"/>`);
    parts.push(`<text x="${x0 + PAD.left - 4}" y="${sy(t) + 4}" text-anchor="end">${key === "bytes" ? mb(t) : num(t)}</text>`);
  }
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<text x="${sx(f * maxRows)}" y="${y0 + H - PAD.bottom + 16}" text-anchor="middle">${num(f * maxRows)}</text>`);
  }
  parts.push(`<text x="${x0 + PAD.left + (W - PAD.left - PAD.right) / 2}" y="${y0 + H - 6}" text-anchor="middle">rows available in the run</text>`);
  for (const s of series) {
    const points = s.curve.map((p) => `${sx(p.rows).toFixed(1)},${sy(p[key]).toFixed(1)}`).join(" ");
    const dash = DASHED.has(s.contestant) ? ' stroke-dasharray="6 4"' : "";
    parts.push(`<polyline fill="none" stroke="${COLORS[s.contestant] ?? "#555"}" stroke-width="2"${dash} points="${points}"/>`);
  }
  return parts.join("\n");
}

/** Cumulative requests and bytes against rows, per contestant, for the charted runs. */
export function chartSvg(report) {
  const charted = report.workloads.filter((w) => report.results.some((r) => r.workload === w.id && r.curve));
  const panels = [];
  charted.forEach((w, row) => {
    const series = report.results.filter((r) => r.workload === w.id && r.curve);
    const maxRows = w.spec.rows;
    panels.push(panel(0, row * H, `${w.id}: requests (cumulative, log)`, series, "requests", maxRows));
    panels.push(panel(W, row * H, `${w.id}: bytes downloaded (cumulative, log)`, series, "bytes", maxRows));
  });
  const legendY = charted.length * H + 10;
  const legend = [...new Map(report.results.map((r) => [r.contestant, r.label])).entries()].map(
    ([id, label], i) =>
      `<rect x="${20 + (i % 3) * 300}" y="${legendY + Math.floor(i / 3) * 20}" width="14" height="4" fill="${COLORS[id] ?? "#555"}"/>` +
      `<text x="${40 + (i % 3) * 300}" y="${legendY + 6 + Math.floor(i / 3) * 20}">${esc(label)}</text>`,
  );
  const height = legendY + 50;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${height}" viewBox="0 0 ${2 * W} ${height}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="#fff"/>
${panels.join("\n")}
${legend.join("\n")}
</svg>
`;
}

/** `node bench/report.mjs [latest.json]`: re-renders latest.md and latest.svg next to the JSON. */
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const json = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "latest.json"));
  const report = JSON.parse(readFileSync(json, "utf8"));
  writeFileSync(path.join(path.dirname(json), "latest.md"), markdownTable(report));
  writeFileSync(path.join(path.dirname(json), "latest.svg"), chartSvg(report));
  process.stdout.write(markdownTable(report));
}
