// The bench's outputs for humans: the markdown table (stdout, latest.md, README) with the
// targets of issue 5 checked, and a hand-written SVG of requests and bytes against rows.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { INTERVAL_MS } from "./workloads.mjs";

const LIBRARY = "library";
/** "Equal" p95 delay: within the run-to-run spread of that figure on the bench machine (≈ 3 %). */
const DELAY_TOLERANCE = 1.05;
const num = (n) => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));
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
  "memory / idle poller",
];

/** Each target of issue 5 with where this run stands. */
export function targets(report) {
  const get = (w, c) => report.results.find((r) => r.workload === w && r.contestant === c);
  const out = [];
  const check = (name, ok, detail) => out.push({ name, ok, detail });
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
  for (const r of report.results.filter((x) => x.contestant === LIBRARY)) {
    const inc = get(r.workload, "incremental");
    if (inc) {
      const ok = r.requests.total <= inc.requests.total && r.bytes.total <= inc.bytes.total && r.rowDelayMs.p95 <= DELAY_TOLERANCE * inc.rowDelayMs.p95;
      check(
        `${r.workload}: requests, bytes ≤ the hand-written incremental poller, p95 delay ≤ it (+5 % noise)`,
        ok,
        `${num(r.requests.total)} vs ${num(inc.requests.total)} requests, ${mb(r.bytes.total)} vs ${mb(inc.bytes.total)}, p95 ${secs(r.rowDelayMs.p95)} vs ${secs(inc.rowDelayMs.p95)} s; bytes ÷ rows' bytes ${r.bytesPerRowByte.toFixed(2)}`,
      );
      // Below a few thousand rows, fixed costs (first fetch, JIT) dominate the per-row figure.
      if (r.rows.expected >= 2000) {
        const cpu = r.cpuMsPer10kRows / inc.cpuMsPer10kRows;
        check(`${r.workload}: CPU per 10k rows ≤ 1.3× the hand-written poller`, cpu <= 1.3, `${cpu.toFixed(2)}×`);
      }
    }
    check(`${r.workload}: p95 row delay ≤ 1.1 × interval (${secs(1.1 * INTERVAL_MS)} s)`, r.rowDelayMs.p95 <= 1.1 * INTERVAL_MS, `${secs(r.rowDelayMs.p95)} s`);
    const end = r.jobs > 1 ? r.completionDelayMs.p95 : r.completionDelayMs.max;
    check(`${r.workload}: completion within one interval of the run's end`, end !== null && end <= INTERVAL_MS, `${secs(end)} s${r.jobs > 1 ? " (p95)" : ""}`);
    if (r.memory) check(`${r.workload}: memory ≤ 10 KB per idle poller`, r.memory.perPollerBytes <= 10_000, `${kb(r.memory.perPollerBytes)} (heap ${kb(r.memory.heapBytes)} + wasm ${kb(r.memory.wasmBytes)})`);
  }
  const s = report.size;
  if (s && !s.error) check("shipped wasm + glue ≤ 30 KB gzipped (40 KB hard limit)", s.totalGzip <= 30_000, `${kb(s.totalGzip)} (wasm ${kb(s.wasmGzip)} + glue ${kb(s.glueGzip)} + entry ${kb(s.entryGzip)})`);
  return out;
}

/** The table the README quotes, with the machine, the date and the targets. */
export function markdownTable(report) {
  const m = report.machine;
  const lines = [
    `Bench of ${report.date.slice(0, 10)} on ${m.cpu} (${m.cores} cores, ${m.memoryGB} GB), ${m.os}, Node ${m.node}.`,
    `Times are API time (the run scaled ${report.workloads.map((w) => `${w.id} 1/${w.scale}`).join(", ")}); interval 10 s for every contestant; bytes are response bodies.`,
    "CPU is `process.cpuUsage` of the contestant's own process (one at a time). Memory is JS heap + wasm memory growth per poller, all 1,000 asleep, after a full GC, connection pool warmed first.",
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
  lines.push("", s && !s.error ? `Shipped size: ${kb(s.totalGzip)} gzipped (wasm ${kb(s.wasmGzip)} + glue ${kb(s.glueGzip)} + entry ${kb(s.entryGzip)}).` : `Shipped size: not measured (${s?.error}).`);
  lines.push("", "Targets (issue 5):", "");
  for (const t of targets(report)) lines.push(`- ${t.ok ? "✅" : "❌"} ${t.name}: ${t.detail}`);
  return `${lines.join("\n")}\n`;
}

// ---- SVG chart: 2 × 2 panels (medium, large) × (requests, bytes), log y axis. ----

const COLORS = { library: "#1b7f3b", seed: "#c0392b", "seed-as-written": "#e39b8f", refetch: "#8e44ad", incremental: "#2266bb" };
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

/** Cumulative requests and bytes against rows, per contestant, for the medium and large runs. */
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
