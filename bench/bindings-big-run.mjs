// The bindings with a big run: useJobPoller in React and in Vue (bench/bindings-app, a Vite
// production build) reading a 50,000-row run of the simulator, in headless Chromium. The app
// shows only the count and the last row, so what a batch costs from the moment the binding
// takes it to the framework's commit is the binding's cost (the store's append and snapshot,
// the framework's update), not the app's. Proportional to the batch means the same cost with
// 45,000 rows held as with 5,000. Writes bench/results/bindings-big-run.json.
//   node bench/bindings-big-run.mjs [--rows 50000] [--page-size 500] [--trials 3]
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { buildApp, serveApp } from "../scripts/framework-apps.mjs";
import { launchBrowser } from "../scripts/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, "results", "bindings-big-run.json");
export const FRAMEWORKS = ["react", "vue"];
/** The batches compared: those that came with at most this share of the rows held, and those with at least 1 − it. */
const SHARE = 0.2;

/** The value at quantile `q` of `xs` (nearest rank). */
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.round(q * (xs.length - 1))];
const round = (ms) => Math.round(ms * 1000) / 1000;

/**
 * The batches with few rows held against those with many. The lower quartile is the figure
 * compared: another process taking the CPU only ever adds time to a batch, so on a loaded
 * machine the lower quartile shows the work itself and the median some of the waiting.
 */
function summarize(batches, rows) {
  const side = (group) => ({
    batches: group.length,
    heldFrom: Math.min(...group.map((b) => b.held)),
    heldTo: Math.max(...group.map((b) => b.held)),
    rowsPerBatch: quantile(group.map((b) => b.rows), 0.5),
    lowerQuartileMs: round(quantile(group.map((b) => b.ms), 0.25)),
    medianMs: round(quantile(group.map((b) => b.ms), 0.5)),
  });
  // The first batch mounts what the app shows: a cost of its own, not of the rows held.
  const timed = batches.filter((b) => b.held > 0).map((b) => ({ ...b, ms: b.committedAt - b.handedAt }));
  const low = side(timed.filter((b) => b.held <= rows * SHARE));
  const high = side(timed.filter((b) => b.held >= rows * (1 - SHARE)));
  return { low, high, ratio: Math.round((high.lowerQuartileMs / low.lowerQuartileMs) * 100) / 100 };
}

/** One framework's trials, each in a new page: the batches of the measured run of each. */
async function trials(demo, browser, framework, { rows, pageSize, count }) {
  const batches = [];
  let shown = 0;
  for (let trial = 0; trial < count; trial++) {
    // Ended runs: their pages are read back to back. The first, a fifth of the size, warms the JIT up.
    const warmUp = demo.sim.createJob({ rows: rows / 5, durationMs: 1, pageSize }).jobUid;
    const { jobUid } = demo.sim.createJob({ rows, durationMs: 1, pageSize });
    const page = await browser.newPage();
    // Cross-origin isolated, so performance.now() counts in 5 µs steps instead of 100 µs.
    await page.route((url) => url.pathname === "/", async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, headers: { ...response.headers(), "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" } });
    });
    await page.goto(`${demo.url}?framework=${framework}&job=${warmUp}&job=${jobUid}`);
    await page.waitForSelector("body[data-done=true]", { timeout: 120_000 });
    if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error("the bindings app is not cross-origin isolated: its times would count in 100 µs steps");
    shown = Number(await page.locator("#count").textContent());
    const run = await page.evaluate(() => window.runs.at(-1));
    await page.close();
    if (shown !== rows || run.some((b) => b.committedAt === null)) throw new Error(`${framework}: ${shown} of ${rows} rows shown, ${run.filter((b) => b.committedAt === null).length} batches never committed`);
    batches.push(...run);
  }
  return { shown, batches: batches.length, ...summarize(batches, rows) };
}

export async function measureBindingsBigRun({ rows = 50000, pageSize = 500, count = 3 } = {}) {
  const app = await buildApp("bindings-app", { dir: path.join(here, "bindings-app"), mode: "production", dependencies: ["react", "react-dom", "scheduler", "vue"] });
  const [demo, browser] = await Promise.all([serveApp(app.dist), launchBrowser()]);
  const loadBefore = loadavg()[0];
  try {
    const result = { rows, pageSize, trials: count };
    for (const framework of FRAMEWORKS) result[framework] = await trials(demo, browser, framework, { rows, pageSize, count });
    return { ...result, load: { before: loadBefore, after: loadavg()[0] } };
  } finally {
    await browser.close();
    await demo.close();
    app.remove();
  }
}

/** One line per framework, for the bench's log and this script's output. */
export const bindingsLines = (r) =>
  FRAMEWORKS.map((f) => {
    const { low, high, ratio, shown } = r[f];
    const side = (s) => `${s.lowerQuartileMs} ms (median ${s.medianMs}) with ${s.heldFrom.toLocaleString("en")}–${s.heldTo.toLocaleString("en")} rows held`;
    return `${f}: ${shown.toLocaleString("en")} rows shown; a batch of ${low.rowsPerBatch} rows ${side(low)}, ${side(high)}: ${ratio}×`;
  });

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { rows: { type: "string" }, "page-size": { type: "string" }, trials: { type: "string" } } });
  const result = await measureBindingsBigRun({ rows: Number(values.rows ?? 50000), pageSize: Number(values["page-size"] ?? 500), count: Number(values.trials ?? 3) });
  writeFileSync(OUT, `${JSON.stringify({ date: new Date().toISOString(), ...result }, null, 2)}\n`);
  for (const line of bindingsLines(result)) console.log(`bindings big run: ${line}`);
  console.log(`load average ${result.load.before.toFixed(2)} → ${result.load.after.toFixed(2)}`);
}
