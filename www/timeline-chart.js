// The request timeline, drawn by hand in SVG: one lane per request kind, failed attempts
// (which the poller retries) in their own lane, and the rows received as a rising line, so the
// polling rhythm is visible at a glance.

const NS = "http://www.w3.org/2000/svg";
const W = 640;
const H = 220;
const PAD = { left: 92, right: 12, top: 12, bottom: 28 };
const LANES = [
  ["results", "results reads"],
  ["run", "status reads"],
  ["failed", "failed → retried"],
];
const LANE_H = 26;
const ROWS_TOP = PAD.top;
const ROWS_BOTTOM = H - PAD.bottom - LANES.length * LANE_H - 8;

function el(name, attrs, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const laneY = (i) => H - PAD.bottom - (LANES.length - i) * LANE_H + LANE_H / 2;

function niceStep(spanMs) {
  const steps = [250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 300000, 600000];
  return steps.find((s) => spanMs / s <= 8) ?? 3600000;
}

function axis(svg, spanMs, x) {
  const step = niceStep(spanMs);
  for (let t = 0; t <= spanMs; t += step) {
    svg.append(el("line", { x1: x(t), x2: x(t), y1: PAD.top, y2: H - PAD.bottom, class: "grid" }));
    const label = step < 1000 ? `${(t / 1000).toFixed(2)}s` : `${Math.round(t / 1000)}s`;
    svg.append(el("text", { x: x(t), y: H - 8, class: "tick", "text-anchor": "middle" }, label));
  }
  LANES.forEach(([, name], i) => svg.append(el("text", { x: PAD.left - 6, y: laneY(i) + 4, class: "lane", "text-anchor": "end" }, name)));
  svg.append(el("text", { x: PAD.left - 6, y: ROWS_TOP + 10, class: "lane", "text-anchor": "end" }, "rows received"));
}

function marks(svg, events, x) {
  for (const e of events) {
    const lane = e.failed ? 2 : e.kind === "run" ? 1 : 0;
    const cls = e.failed ? "mark failed" : e.kind === "run" ? "mark run" : "mark results";
    svg.append(el("rect", { x: x(e.t) - 1.5, y: laneY(lane) - 8, width: 3, height: 16, class: cls }));
  }
}

function rowsLine(svg, arrivals, expected, x, spanMs) {
  const top = Math.max(1, expected ?? 0, arrivals.at(-1)?.total ?? 0);
  const y = (n) => ROWS_BOTTOM - ((ROWS_BOTTOM - ROWS_TOP) * n) / top;
  let d = `M${x(0)},${y(0)}`;
  for (const a of arrivals) d += ` H${x(a.t)} V${y(a.total)}`;
  d += ` H${x(spanMs)}`;
  svg.append(el("line", { x1: x(0), x2: x(spanMs), y1: ROWS_BOTTOM, y2: ROWS_BOTTOM, class: "grid" }));
  svg.append(el("path", { d, class: "rows-line" }));
  svg.append(el("text", { x: PAD.left + 6, y: ROWS_TOP + 10, class: "tick" }, `${arrivals.at(-1)?.total ?? 0} / ${top} rows`));
}

/**
 * Redraws the chart.
 * @param {SVGSVGElement} svg
 * @param {{ events: import("./request-meter.js").RequestEvent[], arrivals: { t: number, total: number }[],
 *   expectedRows: number | null, nowMs: number }} data times in ms since the run was started here
 */
export function drawTimeline(svg, { events, arrivals, expectedRows, nowMs }) {
  const spanMs = Math.max(1000, nowMs, events.at(-1)?.t ?? 0);
  const x = (t) => PAD.left + ((W - PAD.left - PAD.right) * Math.min(t, spanMs)) / spanMs;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.replaceChildren();
  axis(svg, spanMs, x);
  rowsLine(svg, arrivals, expectedRows, x, spanMs);
  marks(svg, events, x);
}
