// The viewers page (www/viewers.html) in Chromium against `npm run worker:dev`: viewers of one
// run on the worker's stream. worker:dev runs with no cadence and no cron tick, so the worker
// reads a run from Captain Data (the simulator) only when it is tracked and when the run's end
// webhook comes (the test ends the run): the runs compared differ by their viewers only.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { rowIds, watchConsole } from "./browser-fixture.mjs";
import { startDemoWithWorker } from "./worker-dev.mjs";

const ROWS = 300;
/** Long enough that no row arrives in the simulator before the test ends the run (one per 12 s). */
const RUN_TAKES_S = 3600;

/** The demo server, Chromium, worker:dev and the simulator: `{ demo, browser, workerOrigin, simOrigin, stop }`. */
let stack;
before(async () => {
  stack = await startDemoWithWorker({ POLL_INTERVAL_MS: "0", CRON_EVERY_MS: "0" });
});
after(() => stack?.stop());

/** The viewers page, with what it sends the worker (HTTP requests, sockets and their frames). */
async function openViewersPage() {
  const context = await stack.browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  const problems = watchConsole(page);
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  const sockets = [];
  page.on("websocket", (ws) => {
    const socket = { url: ws.url(), frames: [] };
    sockets.push(socket);
    ws.on("framereceived", ({ payload }) => socket.frames.push(JSON.parse(String(payload))));
  });
  await page.goto(`${stack.demo.url}viewers.html?dev=${stack.simOrigin}`);
  await page.waitForSelector("body[data-ready=true]");
  return { context, page, problems, requests, sockets };
}

/** Starts a run with `viewers` viewers from the page's form; resolves with its jobUid. */
async function startRun(page, viewers) {
  const form = page.locator("#start-form");
  await form.getByLabel("Viewers").fill(String(viewers));
  await form.getByLabel("Rows").fill(String(ROWS));
  await form.getByLabel("Run takes (s)").fill(String(RUN_TAKES_S));
  await form.getByRole("button", { name: "Start a run with these viewers" }).click();
  await page.waitForFunction(() => document.querySelector("#run-job").textContent !== "");
  return page.locator("#run-job").textContent();
}

/** Waits until the page shows `n` viewers, each in `state` (and seeing the run `runStatus`). */
function untilViewers(page, n, state, runStatus) {
  return page.waitForFunction(
    ({ n, state, runStatus }) => {
      const cards = [...document.querySelectorAll("#viewers .viewer")];
      return cards.length === n && cards.every((c) => c.dataset.state === state && (!runStatus || c.dataset.runStatus === runStatus));
    },
    { n, state, runStatus },
  );
}

/** Captain Data ends the run: its webhook makes the worker read it once more. */
async function finishRun(jobUid) {
  const answer = await fetch(`${stack.simOrigin}/__sim/jobs/${jobUid}/finish`, { method: "POST" });
  assert.equal(answer.status, 200);
}

/**
 * The simulator's count of the worker's requests for the run, once the page shows it. Called
 * when no step is going (the run's status or end reached every viewer: the step's requests came first).
 */
async function apiRequestsShown(page, jobUid) {
  const { requests } = await (await fetch(`${stack.simOrigin}/__sim/stats?job=${jobUid}`)).json();
  await page.waitForFunction((n) => document.querySelector("#c-api").textContent === String(n), requests.total);
  return requests.total;
}

/** What the viewer cards show: rows, order, delay. */
function viewerCards(page) {
  return page.$$eval("#viewers .viewer", (cards) =>
    cards.map((c) => ({ rows: Number(c.dataset.rows), inOrder: c.dataset.inOrder, delayMs: Number(c.dataset.delayMs), text: c.textContent })),
  );
}

/** Every row pushed to each socket, by the frames on the wire (not the page's own count). */
function pushedRowIds(socket) {
  const rows = socket.frames.filter((f) => f.type === "rows");
  let next = 0;
  for (const frame of rows) {
    assert.equal(frame.offset, next, "each frame goes on where the last one ended");
    next += frame.rows.length;
  }
  return rows.flatMap((f) => f.rows.map((row) => row.id));
}

/** What a user checks on a page whose viewers all finished: every row, a delay each, no polling. */
async function assertViewersGotEveryRow(opened, jobUid, viewers) {
  const { page, problems, requests, sockets } = opened;
  const cards = await viewerCards(page);
  assert.equal(cards.length, viewers);
  for (const card of cards) {
    assert.equal(card.rows, ROWS, `every row: ${card.text}`);
    assert.equal(card.inOrder, "true", `each once, in order: ${card.text}`);
    // Pushed, a row is on screen in tens of ms; polling would wait for the next poll (10 s by default).
    assert.ok(Number.isFinite(card.delayMs) && card.delayMs >= 0 && card.delayMs < 2000, `a delay, from the commit: ${card.text}`);
    assert.match(card.text, /delay \d+ ms/);
  }
  const streams = sockets.filter((s) => s.url.includes(`/v3/jobs/${jobUid}/stream`));
  assert.equal(streams.length, viewers, "one socket per viewer, none reopened");
  for (const socket of streams) assert.deepEqual(pushedRowIds(socket), rowIds(ROWS), "every row pushed once, in order");
  assert.deepEqual(requests.filter((url) => url.startsWith(stack.workerOrigin)), [], "no HTTP read of the worker: no polling");
  assert.equal(await page.locator("#c-reads").textContent(), "0");
  assert.equal(await page.locator("#c-sockets").textContent(), String(viewers));
  assert.deepEqual(problems, []);
}

test("viewers of one run get every row once and in order, pushed, and cost Captain Data what one viewer does", { timeout: 120000 }, async () => {
  // One viewer: what a run costs Captain Data.
  const one = await openViewersPage();
  const runA = await startRun(one.page, 1);
  await untilViewers(one.page, 1, "live", "running");
  await finishRun(runA);
  await untilViewers(one.page, 1, "finished", "finished");
  const apiWithOne = await apiRequestsShown(one.page, runA);
  await assertViewersGotEveryRow(one, runA, 1);

  // Eight viewers of a run alike: four from the start, four joining while it goes.
  const many = await openViewersPage();
  const runB = await startRun(many.page, 4);
  await untilViewers(many.page, 4, "live", "running");
  const beforeJoins = await apiRequestsShown(many.page, runB);
  for (let i = 0; i < 4; i++) await many.page.getByRole("button", { name: "Add a viewer" }).click();
  await untilViewers(many.page, 8, "live", "running");
  assert.equal(await apiRequestsShown(many.page, runB), beforeJoins, "viewers joining made no request to Captain Data");
  await finishRun(runB);
  await untilViewers(many.page, 8, "finished", "finished");
  assert.equal(await apiRequestsShown(many.page, runB), apiWithOne, "eight viewers cost Captain Data what one does");
  await assertViewersGotEveryRow(many, runB, 8);

  // The page's log of the worker's requests: each with the viewers connected then.
  const log = await many.page.$$eval("#api-log tbody tr", (rows) => rows.length);
  assert.equal(log, apiWithOne);
  await one.context.close();
  await many.context.close();
});
