// The demo's windowed results table draws every row once and in order: while the rows arrive,
// at a few scroll positions, and after the run. Every <tr> of the table's body is checked each
// frame: distinct, contiguous positions, each showing the row of its position (a blank spacer
// row would count as a row too: two of them read as one row drawn twice).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startDemoServer } from "../../scripts/start.mjs";
import { launchBrowser, rowIds, shownRowIds, startSimulatedRun, untilRowsHeld, waitForState, watchConsole } from "./browser-fixture.mjs";

let demo;
let browser;
before(async () => {
  [demo, browser] = await Promise.all([startDemoServer({ port: 0 }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

/** In the page: checks the rows drawn on every frame from now on; `window.__table` holds the tally. */
function watchDrawnRows() {
  const tally = { frames: 0, checked: 0, problems: [] };
  window.__table = tally;
  const drawnProblem = () => {
    const trs = [...document.querySelectorAll("#results tbody tr")];
    if (trs.length === 0) return null;
    const texts = trs.map((tr) => tr.textContent);
    if (new Set(texts).size !== trs.length) return `${trs.length} rows drawn, ${new Set(texts).size} distinct`;
    const at = trs.map((tr) => Number(tr.getAttribute("aria-rowindex")) - 2);
    const gap = at.findIndex((p, i) => i > 0 && p !== at[i - 1] + 1);
    if (gap !== -1) return `positions ${at[gap - 1]} then ${at[gap]}`;
    const wrong = trs.findIndex((tr, i) => tr.dataset.id !== `row-${at[i]}`);
    if (wrong !== -1) return `position ${at[wrong]} shows ${trs[wrong].dataset.id}`;
    return null;
  };
  const frame = () => {
    tally.frames += 1;
    const problem = drawnProblem();
    if (document.querySelector("#results tbody tr")) tally.checked += 1;
    if (problem && tally.problems.length < 10) tally.problems.push(`frame ${tally.frames} (scrollTop ${document.querySelector("#results-wrap").scrollTop}): ${problem}`);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

async function openDemo() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  const problems = watchConsole(page);
  await page.goto(demo.url);
  await page.waitForSelector("body[data-ready=true]");
  await page.evaluate(watchDrawnRows);
  return { context, page, problems };
}

const scrollTo = (page, fraction) => page.locator("#results-wrap").evaluate((el, f) => (el.scrollTop = (el.scrollHeight - el.clientHeight) * f), fraction);

/** Waits until the rows drawn cover the scroller's view: the sticky header at its top, rows from under it to its bottom (or the run's last row). */
async function untilDrawnAtScroll(page, rows) {
  await page.waitForFunction((rows) => {
    const wrap = document.querySelector("#results-wrap");
    const table = document.querySelector("#results");
    const drawn = table.tBodies[0].rows;
    if (drawn.length === 0) return false;
    const top = drawn[0].getBoundingClientRect().top;
    const last = drawn[drawn.length - 1];
    const bottom = last.getBoundingClientRect().bottom;
    const viewBottom = wrap.getBoundingClientRect().top + wrap.clientHeight;
    const head = table.tHead.querySelector("th").getBoundingClientRect(); // sticky: the <th>s move, not the <thead>
    const headAtTop = Math.abs(head.top - wrap.getBoundingClientRect().top - wrap.clientTop) <= 1; // not a stale window's
    return headAtTop && top <= head.bottom + 1 && (bottom >= viewBottom - 1 || last.getAttribute("aria-rowindex") === String(rows + 1));
  }, rows);
}

async function tally(page) {
  return page.evaluate(() => window.__table);
}

/** Scrolls to a few positions while the run goes on, until `rows` are held and the run completed. */
async function scrollWhileArriving(page, rows) {
  const positions = [1, 0.5, 0, 0.25, 0.9, 1];
  for (let i = 0; ; i++) {
    if ((await page.locator("body").getAttribute("data-run-state")) === "completed") break;
    await scrollTo(page, positions[i % positions.length]);
    await page.waitForFunction((n) => window.__table.frames >= n, (await tally(page)).frames + 3);
  }
  await untilRowsHeld(page, rows, { exact: true });
}

/** After the run: each position shows its rows, all of them distinct and in order, the download every row once. */
async function checkAfterRun(page, rows) {
  for (const fraction of [0, 0.37, 0.5, 0.81, 1, 0.02]) {
    await scrollTo(page, fraction);
    await untilDrawnAtScroll(page, rows);
    const wanted = Math.round(fraction * rows);
    const at = Number(await page.locator("#results tbody tr").first().getAttribute("aria-rowindex")) - 2;
    assert.ok(Math.abs(at - wanted) <= 100, `scrolled to ${fraction}: first row drawn ${at}, about ${wanted} expected`);
  }
  await scrollTo(page, 1);
  await page.waitForFunction((last) => document.querySelector("#results tbody tr:last-child")?.dataset.id === last, `row-${rows - 1}`);
  assert.deepEqual(await shownRowIds(page), rowIds(rows), "every row once, in order");
  const { frames, checked, problems } = await tally(page);
  assert.deepEqual(problems, [], `rows drawn twice, out of order or misplaced over ${frames} frames`);
  assert.ok(checked > 20, `only ${checked} frames with rows drawn were checked`);
  return { frames, checked };
}

test("3,000 rows (the default run): each frame draws distinct rows, in order, while they arrive, while scrolling and after the run", async (t) => {
  const { context, page, problems } = await openDemo();
  await page.getByRole("button", { name: "Start simulated run" }).click();
  await untilRowsHeld(page, 1);
  await scrollWhileArriving(page, 3000);
  await waitForState(page, "completed", 60000);
  const { frames, checked } = await checkAfterRun(page, 3000);
  const drawn = await page.$$eval("#results tbody tr", (trs) => trs.map((tr) => tr.textContent));
  assert.equal(new Set(drawn).size, drawn.length, "the table's rows after the run, all distinct");
  t.diagnostic(`3,000 rows: ${checked} of ${frames} frames checked, ${drawn.length} rows drawn at the end`);
  assert.deepEqual(problems, []);
  await context.close();
});

test("50,000 rows: each frame draws distinct rows, in order, while they arrive, while scrolling and after the run", async (t) => {
  const { context, page, problems } = await openDemo();
  await startSimulatedRun(page, { inputs: 10000, rowsPerInput: 5, durationS: 3, pageSize: 1000, intervalMs: 200 });
  await untilRowsHeld(page, 1);
  await scrollWhileArriving(page, 50000);
  const { frames, checked } = await checkAfterRun(page, 50000);
  t.diagnostic(`50,000 rows: ${checked} of ${frames} frames checked`);
  assert.deepEqual(problems, []);
  await context.close();
});
