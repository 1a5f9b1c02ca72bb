// A big run in the demo page, as a person would watch it: 10,000 inputs × 5 rows (50,000 rows)
// over 20 s, polled every second, in headless Chromium. Measures what stalls the page while the
// rows arrive: Chromium's long tasks (PerformanceObserver "longtask", > 50 ms), the longest one,
// and the most <tr>s the results table held. A long task is wall-clock time: on a loaded machine
// a 15 ms task the OS pauses becomes a long one. So the page's main thread is also traced
// (its tasks with their thread CPU time), and the tasks whose own CPU time is
// over 50 ms are counted apart: the page's work, whatever the load. Writes
// bench/results/demo-big-run.json.
//   node bench/demo-big-run.mjs [--rows-per-input 5] [--inputs 10000] [--duration-s 20]
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { startDemoServer } from "../scripts/start.mjs";
import { launchBrowser } from "../scripts/chromium.mjs";
import { heldRowCount, startSimulatedRun, untilRowsHeld, waitForState } from "../scripts/demo-page.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, "results", "demo-big-run.json");

/** For addInitScript: long tasks and the table's size, recorded from the page's first frame. */
function recordStalls() {
  window.__stalls = { longTasks: [], mostRows: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__stalls.longTasks.push({ start: entry.startTime, ms: entry.duration });
  }).observe({ type: "longtask", buffered: true });
  // After every change of the table's rows (a loop of animation frames would itself make the
  // page draw 60 frames a second while it is measured).
  const count = () => {
    const body = document.querySelector("#results tbody");
    if (body) window.__stalls.mostRows = Math.max(window.__stalls.mostRows, body.rows.length);
  };
  addEventListener("DOMContentLoaded", () => new MutationObserver(count).observe(document.querySelector("#results tbody"), { childList: true }));
}

/**
 * Traces the page's main thread from now; `stop()` resolves with its tasks, `{ ms, cpuMs }`
 * each (wall-clock and thread CPU time).
 * @param {import("playwright-core").Page} page
 */
async function traceMainThread(page) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on("Tracing.dataCollected", ({ value }) => events.push(...value));
  await cdp.send("Tracing.start", { traceConfig: { includedCategories: ["disabled-by-default-devtools.timeline"] }, transferMode: "ReportEvents" });
  return {
    async stop() {
      const complete = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
      await cdp.send("Tracing.end");
      await complete;
      await cdp.detach();
      // The renderer's main thread: the busiest thread named so (other renderers idle).
      const mains = new Set(events.filter((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`));
      const byThread = new Map();
      for (const e of events) {
        if (e.ph !== "X" || e.name !== "RunTask" || !mains.has(`${e.pid}:${e.tid}`)) continue;
        const key = `${e.pid}:${e.tid}`;
        if (!byThread.has(key)) byThread.set(key, []);
        byThread.get(key).push({ ms: e.dur / 1000, cpuMs: (e.tdur ?? e.dur) / 1000 });
      }
      const busy = (tasks) => tasks.reduce((sum, t) => sum + t.cpuMs, 0);
      return [...byThread.values()].sort((a, b) => busy(b) - busy(a))[0] ?? [];
    },
  };
}

export async function measureBigRun({ inputs = 10000, rowsPerInput = 5, durationS = 20, intervalMs = 1000 } = {}) {
  const [demo, browser] = await Promise.all([startDemoServer({ port: 0 }), launchBrowser()]);
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(recordStalls);
    const page = await context.newPage();
    page.setDefaultTimeout((durationS + 120) * 1000);
    await page.goto(demo.url);
    await page.waitForSelector("body[data-ready=true]");
    const loadBefore = loadavg()[0];
    const trace = await traceMainThread(page);
    const startedAt = await page.evaluate(() => performance.now());
    await startSimulatedRun(page, { inputs, rowsPerInput, durationS, pageSize: 1000, intervalMs });
    await waitForState(page, "completed", (durationS + 120) * 1000);
    const rows = inputs * rowsPerInput;
    await untilRowsHeld(page, rows, { exact: true });
    const tasks = await trace.stop();
    const held = await heldRowCount(page);
    const { longTasks, mostRows } = await page.evaluate(() => window.__stalls);
    const during = longTasks.filter((t) => t.start >= startedAt);
    await context.close();
    return {
      rows,
      held,
      durationS,
      intervalMs,
      longTasks: during.length,
      longestTaskMs: Math.round(Math.max(0, ...during.map((t) => t.ms))),
      over100ms: during.filter((t) => t.ms > 100).length,
      mostRowsInDom: mostRows,
      // The same window, by each task's own CPU time (the trace starts just before the run's form is filled in).
      cpuOver50ms: tasks.filter((t) => t.cpuMs > 50).length,
      longestCpuMs: Math.round(Math.max(0, ...tasks.map((t) => t.cpuMs))),
      mainThreadCpuMs: Math.round(tasks.reduce((sum, t) => sum + t.cpuMs, 0)),
      load: { before: loadBefore, after: loadavg()[0] },
    };
  } finally {
    await browser.close();
    await demo.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { inputs: { type: "string" }, "rows-per-input": { type: "string" }, "duration-s": { type: "string" } },
  });
  const result = await measureBigRun({
    inputs: Number(values.inputs ?? 10000),
    rowsPerInput: Number(values["rows-per-input"] ?? 5),
    durationS: Number(values["duration-s"] ?? 20),
  });
  const report = { date: new Date().toISOString(), ...result };
  writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `demo big run: ${result.held.toLocaleString("en")} of ${result.rows.toLocaleString("en")} rows held; ` +
      `${result.longTasks} long tasks (> 50 ms), the longest ${result.longestTaskMs} ms, ${result.over100ms} over 100 ms; ` +
      `at most ${result.mostRowsInDom} <tr>s in the DOM; by CPU time ${result.cpuOver50ms} tasks over 50 ms, the longest ${result.longestCpuMs} ms, ` +
      `${result.mainThreadCpuMs} ms in all; load average ${result.load.before.toFixed(2)} → ${result.load.after.toFixed(2)}`,
  );
}
