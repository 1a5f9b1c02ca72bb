// The pace of a poller in a browser: a hidden page polls at hiddenIntervalMs and at once when
// visible again; offline, no request is attempted and no retry is spent, and the run completes
// once back online; a Web Worker (no document) runs the poller as a page does.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createSim } from "../../sim/index.js";
import { startDemoServer } from "../../scripts/start.mjs";
import { launchBrowser, rowIds, shownRowIds, startSimulatedRun, waitForState, untilRowsHeld } from "./browser-fixture.mjs";

const API_KEY = "sk-pace-91c4e2";

let demo;
let browser;
before(async () => {
  [demo, browser] = await Promise.all([startDemoServer({ port: 0, sim: createSim({ apiKey: API_KEY }) }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

async function openPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  await page.goto(demo.url);
  await page.waitForSelector("body[data-ready=true]");
  return page;
}

/** Starts a JobPoller in the page (the package by name, as an app would); records in window.__seen. */
function startPoller(page, jobUid, extra) {
  return page.evaluate(
    async ({ jobUid, apiKey, extra }) => {
      const { JobPoller } = await import("captaindata-poller");
      const seen = (window.__seen = { ids: [], outcome: null });
      const poller = new JobPoller({
        jobUid,
        apiKey,
        projectId: "sim-project",
        baseUrl: `${location.origin}/v3`,
        shareAcrossTabs: false,
        statusEvery: 2,
        ...extra,
        onBatch: (batch) => void seen.ids.push(...batch.results.map((row) => row.id)),
        onComplete: (summary) => void (seen.outcome = { status: summary.status, retries: summary.retries }),
        onError: (error) => void (seen.outcome = { code: error.code, message: error.message }),
      });
      window.__poller = poller;
      poller.start().catch(() => {});
    },
    { jobUid, apiKey: API_KEY, extra },
  );
}

const outcomeOf = (page) => page.waitForFunction(() => window.__seen?.outcome).then((h) => h.jsonValue());
const requests = (jobUid) => demo.sim.stats(jobUid).log.length;
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Emulates the page being hidden or shown, as the browser does when the tab changes. */
function setHidden(page, hidden) {
  return page.evaluate((hidden) => {
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    document.dispatchEvent(new Event("visibilitychange"));
  }, hidden);
}

/** Waits (bounded) until the simulator has seen `n` requests of the run. */
function waitForRequests(jobUid, n) {
  return demo.sim.until(() => requests(jobUid) >= n, { what: `${n} requests of ${jobUid}` });
}

/**
 * Hides the page while its poller sleeps between polls: in the page, waits for the poller to arm
 * its interval timer (nothing in flight, no read chained to the last one), then hides it in the
 * same turn, before that timer can fire. A guessed pause could catch a read in flight instead.
 */
function hideWhileAsleep(page, intervalMs) {
  return page.evaluate(
    (intervalMs) =>
      new Promise((resolve) => {
        const real = window.setTimeout;
        window.setTimeout = function setTimeout(fn, ms, ...rest) {
          const id = real(fn, ms, ...rest);
          if (ms >= intervalMs / 2 && ms <= intervalMs * 1.5) { // the interval, lengthened by up to 5 %
            window.setTimeout = real;
            queueMicrotask(() => {
              Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
              Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
              document.dispatchEvent(new Event("visibilitychange"));
              resolve();
            });
          }
          return id;
        };
      }),
    intervalMs,
  );
}

/** Waits until every request the simulator has seen for the run was answered. */
const settled = (jobUid) => demo.sim.until(() => demo.sim.stats(jobUid).log.every((e) => e.status !== null), { what: "requests answered" });

test("a hidden page polls at hiddenIntervalMs, and at once when visible again", async () => {
  const context = await browser.newContext();
  try {
    const page = await openPage(context);
    const { jobUid } = demo.sim.createJob({ rows: 50, durationMs: 60_000 });
    await startPoller(page, jobUid, { intervalMs: 100, hiddenIntervalMs: 1_500 });
    await waitForRequests(jobUid, 4); // polling at 100 ms
    await hideWhileAsleep(page, 100);
    const hiddenAt = requests(jobUid);
    await wait(1_000); // the window measured
    const whileHidden = requests(jobUid) - hiddenAt;
    // Visible: at 100 ms a second would have cost ~10 polls (+ status reads); hidden: at most one.
    assert.ok(whileHidden <= 2, `${whileHidden} requests in 1 s while hidden`);
    const shownAt = requests(jobUid);
    await setHidden(page, false);
    await waitForRequests(jobUid, shownAt + 1);
    assert.ok(requests(jobUid) > shownAt, "a poll at once on becoming visible");
    await waitForRequests(jobUid, shownAt + 5);
    assert.ok(requests(jobUid) >= shownAt + 5, "then the normal cadence again");
  } finally {
    await context.close();
  }
});

test("hiddenIntervalMs: Infinity pauses polling while hidden", async () => {
  const context = await browser.newContext();
  try {
    const page = await openPage(context);
    const { jobUid } = demo.sim.createJob({ rows: 50, durationMs: 60_000 });
    await startPoller(page, jobUid, { intervalMs: 100, hiddenIntervalMs: Infinity });
    await waitForRequests(jobUid, 3);
    await hideWhileAsleep(page, 100);
    const hiddenAt = requests(jobUid);
    await wait(800); // an absence window: visible, the poller would read 8 times in it
    assert.equal(requests(jobUid), hiddenAt, "no request while hidden");
    await setHidden(page, false);
    await waitForRequests(jobUid, hiddenAt + 1);
    assert.ok(requests(jobUid) > hiddenAt);
  } finally {
    await context.close();
  }
});

test("offline for longer than the retries last: no request, then the run completes with every row", async () => {
  const context = await browser.newContext();
  try {
    const page = await openPage(context);
    // A run that lasts until the test finishes it: it cannot end while the page is offline.
    const { jobUid } = demo.sim.createJob({ rows: 120, durationMs: 600_000, pageSize: 1000 });
    // Retries would be spent in well under a second.
    await startPoller(page, jobUid, { intervalMs: 100, retry: { retries: 2, minDelayMs: 20, maxDelayMs: 40 } });
    await waitForRequests(jobUid, 2);
    await context.setOffline(true);
    // The page knows it is offline, and what was sent before has been answered or failed.
    await page.waitForFunction(() => navigator.onLine === false);
    await settled(jobUid);
    const offlineAt = requests(jobUid);
    await wait(1_500); // an absence window, longer than the retries would last
    assert.equal(requests(jobUid), offlineAt, "no request attempted while offline");
    assert.equal(await page.evaluate(() => window.__seen.outcome), null, "retries not spent: still polling");
    await context.setOffline(false);
    demo.sim.finish(jobUid);
    const outcome = await outcomeOf(page);
    assert.equal(outcome.status, "finished", JSON.stringify(outcome));
    assert.deepEqual(await page.evaluate(() => window.__seen.ids), rowIds(120));
  } finally {
    await context.close();
  }
});

test("a Web Worker (no document) runs the poller to the end", async () => {
  const context = await browser.newContext();
  try {
    const page = await openPage(context);
    const { jobUid } = demo.sim.createJob({ rows: 80, durationMs: 300 });
    const result = await page.evaluate(
      ({ jobUid, apiKey }) => {
        const source = `
          import { JobPoller } from "${location.origin}/js/browser.js";
          const ids = [];
          const poller = new JobPoller({
            jobUid: ${JSON.stringify(jobUid)}, apiKey: ${JSON.stringify(apiKey)}, projectId: "sim-project",
            baseUrl: "${location.origin}/v3", intervalMs: 50, statusEvery: 2,
            onBatch: (batch) => ids.push(...batch.results.map((row) => row.id)),
          });
          poller.start().then(
            (summary) => postMessage({ status: summary.status, ids, role: poller.role }),
            (error) => postMessage({ code: error.code, message: error.message }),
          );`;
        const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
        const worker = new Worker(url, { type: "module" });
        return new Promise((resolve, reject) => {
          worker.onmessage = (event) => resolve(event.data);
          worker.onerror = (event) => reject(new Error(event.message));
        });
      },
      { jobUid, apiKey: API_KEY },
    );
    assert.equal(result.status, "finished", JSON.stringify(result));
    assert.deepEqual(result.ids, rowIds(80));
  } finally {
    await context.close();
  }
});

test("the demo says when a tab stops spending requests: offline, then hidden", async () => {
  // The demo as a newcomer runs it: its own simulator with the demo's credentials.
  const own = await startDemoServer({ port: 0, sim: createSim() });
  const context = await browser.newContext();
  const requestsOf = (jobUid) => own.sim.stats(jobUid).log.length;
  try {
    const page = await context.newPage();
    await page.goto(own.url);
    await page.waitForSelector("body[data-ready=true]");
    // A long run, finished on command at the end: it cannot end before the page goes offline.
    const jobUid = await startSimulatedRun(page, { inputs: 40, durationS: 60, pageSize: 1000, intervalMs: 100 });
    await untilRowsHeld(page, 1);
    await context.setOffline(true);
    await page.waitForFunction(() => /offline/.test(document.querySelector("#pace").textContent));
    // What was sent before the network went has been answered or failed.
    await own.sim.until(() => own.sim.stats(jobUid).log.every((e) => e.status !== null), { what: "requests answered" });
    const offlineAt = requestsOf(jobUid);
    await wait(600); // an absence window
    assert.equal(requestsOf(jobUid), offlineAt, "no request while the demo says offline");
    await context.setOffline(false);
    await page.waitForFunction(() => document.querySelector("#pace").hidden);
    await setHidden(page, true);
    assert.match(await page.locator("#pace").textContent(), /hidden: polling at most every 60 s/);
    await setHidden(page, false);
    own.sim.finish(jobUid);
    await waitForState(page, "completed");
    assert.deepEqual(await shownRowIds(page), rowIds(40));
  } finally {
    await context.close();
    await own.close();
  }
});
