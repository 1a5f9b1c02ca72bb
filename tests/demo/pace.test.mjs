// The pace of a poller in a browser: a hidden page polls at hiddenIntervalMs and at once when
// visible again; offline, no request is attempted and no retry is spent, and the run completes
// once back online; a Web Worker (no document) runs the poller as a page does. "Nothing will be
// sent" is a condition, not a window: the package's sleeps and request timeouts are the only
// things that can make it send, so a poller whose only timer is hours long (its deadline) and that
// has nothing in flight sends nothing until the test wakes it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createSim } from "../../sim/index.js";
import { startDemoServer } from "../../scripts/start.mjs";
import { simChanges, until } from "../support/until.mjs";
import { launchBrowser, rowIds, shownRowIds, startSimulatedRun, trackPackageTimers, waitForState, untilRowsHeld } from "./browser-fixture.mjs";

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
  await page.addInitScript(trackPackageTimers);
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
        timeoutMs: 4_000,
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
/** A request's timeout in these pollers: told apart from their sleeps among the package's timers. */
const REQUEST_TIMEOUT_MS = 4_000;
/** Longer than any test here: a timer this long is the poll's deadline (6 h by default), not a poll. */
const HOURS = 3_600_000;

/** The package's pending timers in the page, how many it has set, cleared and fired, and the poller's outcome. */
const timersIn = (page) =>
  page.evaluate(() => ({ pending: window.__packageTimers.pending(), ...window.__packageTimers.counts, outcome: window.__seen?.outcome ?? null }));

/**
 * Resolves with the page's timers once its poller is asleep between polls: the package holds one
 * timer, not a request's timeout (`requestTimeoutMs`: nothing is in flight) and at least
 * `minSleepMs` long, and `sim` has answered every request of the run. `fail(timers)` may throw to
 * end the wait at once (a request while hidden, say).
 */
function untilAsleep(page, jobUid, { sim = demo.sim, requestTimeoutMs = REQUEST_TIMEOUT_MS, minSleepMs = 0, fail = () => {}, what = "the poller asleep" } = {}) {
  let last;
  const asleep = async () => {
    const timers = (last = await timersIn(page));
    fail(timers);
    const answered = sim.stats(jobUid).log.every((e) => e.status !== null);
    const [sleep, ...others] = timers.pending;
    return answered && others.length === 0 && sleep !== undefined && sleep !== requestTimeoutMs && sleep >= minSleepMs && timers;
  };
  return until(asleep, { on: [simChanges(sim)], everyMs: 25, what: `${what} (${jobUid})`, detail: () => `timers ${JSON.stringify(last)}` });
}

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
  return until(() => requests(jobUid) >= n, { on: [simChanges(demo.sim)], what: `${n} requests of ${jobUid}` });
}

/**
 * Hides the page while its poller sleeps between polls: in the page, waits for the package to arm
 * its interval timer (the page's timer tracker, tests/support/timers.mjs, reports it as it is
 * set: nothing in flight, no read chained to the last one), then hides it in the same turn,
 * before that timer can fire. A guessed pause could catch a read in flight instead.
 */
function hideWhileAsleep(page, intervalMs) {
  return page.evaluate(
    (intervalMs) =>
      new Promise((resolve) => {
        const timers = window.__packageTimers;
        let set = timers.counts.set;
        const unsubscribe = timers.onChange(() => {
          if (timers.counts.set === set) return; // one cleared or fired
          set = timers.counts.set;
          const ms = timers.pending().at(-1); // the one just set
          if (!(ms >= intervalMs / 2 && ms <= intervalMs * 1.5)) return; // the interval, lengthened by up to 5 %
          unsubscribe();
          // After the package's own turn: the glue is still inside the call that set the timer.
          queueMicrotask(() => {
            Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
            Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
            document.dispatchEvent(new Event("visibilitychange"));
            resolve();
          });
        });
      }),
    intervalMs,
  );
}

test("a hidden page polls at hiddenIntervalMs, and at once when visible again", async () => {
  const context = await browser.newContext();
  try {
    const page = await openPage(context);
    const { jobUid } = demo.sim.createJob({ rows: 50, durationMs: 60_000 });
    await startPoller(page, jobUid, { intervalMs: 100, hiddenIntervalMs: 1_500 });
    await waitForRequests(jobUid, 4); // polling at 100 ms
    await hideWhileAsleep(page, 100);
    const hiddenAt = requests(jobUid);
    // Hidden: the sleep in hand is stretched to hiddenIntervalMs; at 100 ms the poller would
    // read ~15 times in it. At most one tick (a poll and a status read) may finish first.
    const atMostATick = ({ pending }) =>
      assert.ok(requests(jobUid) - hiddenAt <= 2, `${requests(jobUid) - hiddenAt} requests while hidden (timers ${pending})`);
    const hidden = await untilAsleep(page, jobUid, { fail: atMostATick, what: "the hidden poller asleep" });
    assert.ok(hidden.pending[0] >= 1_500 && hidden.pending[0] <= 1_575, `asleep ${hidden.pending[0]} ms while hidden, not hiddenIntervalMs`);
    const shownAt = requests(jobUid);
    await setHidden(page, false);
    await waitForRequests(jobUid, shownAt + 1);
    assert.equal((await timersIn(page)).fired, hidden.fired, "a poll at once on becoming visible: the hidden sleep was cut short, not waited out");
    const visible = await untilAsleep(page, jobUid, { what: "the visible poller asleep" });
    assert.ok(visible.pending[0] <= 105, `asleep ${visible.pending[0]} ms once visible: the normal cadence again`);
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
    const none = ({ pending }) => assert.equal(requests(jobUid), hiddenAt, `no request while hidden (timers ${pending})`);
    // Nothing can wake it but the page: its only timer is its deadline's.
    const paused = await untilAsleep(page, jobUid, { fail: none, what: "the hidden poller paused" });
    assert.ok(paused.pending[0] >= HOURS, `hidden, the poller still sleeps ${paused.pending[0]} ms before its next poll`);
    await setHidden(page, false);
    await waitForRequests(jobUid, hiddenAt + 1); // fails (at its bound) if showing the page does not resume polling
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
    // Requests the page attempts, whether or not they reach the simulator.
    const attempted = [];
    page.on("request", (request) => void (new URL(request.url()).pathname.startsWith("/v3/") && attempted.push(request.url())));
    await context.setOffline(true);
    await page.waitForFunction(() => navigator.onLine === false);
    const offlineAt = attempted.length;
    // Offline, the poller sends nothing until back online: once the sleep in hand is over, its only
    // timer is its deadline's. No retry is spent meanwhile (2 retries at 20–40 ms would end the
    // poll), and a request sent as the network went (before the page heard of it) is the only one
    // that may have been attempted.
    const offlineRules = ({ outcome }) => {
      assert.equal(outcome, null, "retries not spent: still polling");
      assert.ok(attempted.length - offlineAt <= 1, `requests attempted while offline: ${attempted.slice(offlineAt)}`);
    };
    await untilAsleep(page, jobUid, { minSleepMs: HOURS, fail: offlineRules, what: "the offline poller waiting for the network, its only timer its deadline's" });
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
  try {
    const page = await context.newPage();
    await page.addInitScript(trackPackageTimers);
    await page.goto(own.url);
    await page.waitForSelector("body[data-ready=true]");
    // A long run, finished on command at the end: it cannot end before the page goes offline.
    const jobUid = await startSimulatedRun(page, { inputs: 40, durationS: 60, pageSize: 1000, intervalMs: 100 });
    await untilRowsHeld(page, 1);
    const attempted = []; // requests the page attempts, whether or not they reach the simulator
    page.on("request", (request) => void (new URL(request.url()).pathname.startsWith("/v3/") && attempted.push(request.url())));
    await context.setOffline(true);
    const offlineAt = attempted.length;
    await page.waitForFunction(() => /offline/.test(document.querySelector("#pace").textContent));
    // The demo's poller sends nothing while it says offline: once the sleep in hand is over, its
    // only timer is its deadline's (a request sent as the network went may have failed; no other).
    const atMostOne = () => assert.ok(attempted.length - offlineAt <= 1, `requests attempted while offline: ${attempted.slice(offlineAt)}`);
    await untilAsleep(page, jobUid, { sim: own.sim, requestTimeoutMs: 15_000, minSleepMs: HOURS, fail: atMostOne, what: "the demo's poller waiting for the network" });
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
