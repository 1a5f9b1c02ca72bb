// A big run in the demo page, as a person would watch it: 10,000 inputs × 5 rows (50,000 rows)
// over 20 s, polled every second, in headless Chromium. Measures what stalls the page while the
// rows arrive: Chromium's long tasks (PerformanceObserver "longtask", > 50 ms), the longest one,
// and the most <tr>s the results table held. Writes bench/results/demo-big-run.json.
//   node bench/demo-big-run.mjs [--rows-per-input 5] [--inputs 10000] [--duration-s 20]
import { writeFileSync } from "node:fs";
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
  const sample = () => {
    const body = document.querySelector("#results tbody");
    if (body) window.__stalls.mostRows = Math.max(window.__stalls.mostRows, body.rows.length);
    requestAnimationFrame(sample);
  };
  requestAnimationFrame(sample);
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
    const startedAt = await page.evaluate(() => performance.now());
    await startSimulatedRun(page, { inputs, rowsPerInput, durationS, pageSize: 1000, intervalMs });
    await waitForState(page, "completed", (durationS + 120) * 1000);
    const rows = inputs * rowsPerInput;
    await untilRowsHeld(page, rows, { exact: true });
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
      `at most ${result.mostRowsInDom} <tr>s in the DOM`,
  );
}
