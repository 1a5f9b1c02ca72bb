// Tabs of one origin share one poller (js/tabs.js around js/tab-protocol.js): pages of one
// browser context poll the same simulated run through the package. The run's clock is the
// test's (a manual clock): the run cannot move, let alone end, before the pages are open; the
// test moves it step by step and waits for what the pages show, never for a duration. The
// protocol's many interleavings are covered fast in tests/tab-protocol.test.mjs; these check
// the browser glue: Web Locks, BroadcastChannel, visibility, the callbacks.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/clock.js";
import { createSim } from "../../sim/index.js";
import { startDemoServer } from "../../scripts/start.mjs";
import { launchBrowser, rowIds, shownRowIds, startSimulatedRun, waitForState, watchConsole, untilRowsHeld } from "./browser-fixture.mjs";

const API_KEY = "sk-tabs-5e1f0c7d-do-not-share"; // distinctive: searched for in every channel message
const PROXY_TOKEN = "proxy-token-8b2a61";
const RUN = { rows: 300, durationMs: 10000, pageSize: 40 };
const STEPS = 5; // the run's clock moves in this many steps

const clock = manualClock(0);
let demo;
let browser;
before(async () => {
  [demo, browser] = await Promise.all([startDemoServer({ port: 0, sim: createSim({ apiKey: API_KEY, clock }) }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

/**
 * A browser context whose pages record what they post on a BroadcastChannel and when they
 * call the API, and whose visibility the test sets (`window.__setHidden`).
 */
async function newContext() {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    const posted = (window.__posted = []);
    const post = BroadcastChannel.prototype.postMessage;
    BroadcastChannel.prototype.postMessage = function record(message) {
      posted.push(JSON.stringify(message));
      return post.call(this, message);
    };
    const fetches = (window.__fetches = []);
    const fetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      if (String(input.url ?? input).includes("/v3/jobs/")) fetches.push(performance.now());
      return fetch(input, init);
    };
    let hidden = false;
    Object.defineProperty(Document.prototype, "hidden", { get: () => hidden, configurable: true });
    Object.defineProperty(Document.prototype, "visibilityState", { get: () => (hidden ? "hidden" : "visible"), configurable: true });
    window.__setHidden = (value) => {
      hidden = value;
      document.dispatchEvent(new Event("visibilitychange"));
    };
  });
  return context;
}

async function openPage(context, { hidden = false } = {}) {
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const problems = watchConsole(page);
  await page.goto(demo.url);
  await page.waitForSelector("body[data-ready=true]");
  if (hidden) await page.evaluate(() => window.__setHidden(true));
  return { page, problems };
}

/**
 * Starts a JobPoller in the page, imported by name as an app would; what it hands to the
 * callbacks is recorded in `window.__seen`.
 */
function startPoller(page, jobUid, { cursor, iterate = false, intervalMs = 100, maxRequests, shareKey } = {}) {
  return page.evaluate(
    async ({ jobUid, apiKey, token, cursor, iterate, intervalMs, maxRequests, shareKey }) => {
      const { JobPoller } = await import("captaindata-poller");
      const seen = (window.__seen = { batches: [], roles: [], statuses: [], outcome: null, summary: null, iterating: iterate });
      const record = (batch) => seen.batches.push({ offset: batch.offset, ids: batch.results.map((row) => row.id), cursor: batch.cursor });
      const poller = new JobPoller({
        jobUid,
        baseUrl: `${location.origin}/v3`,
        apiKey,
        projectId: "sim-project",
        headers: { "x-proxy-token": token },
        cursor,
        intervalMs,
        maxRequests,
        shareKey,
        retry: { retries: 5, minDelayMs: 50, maxDelayMs: 500 },
        onBatch(batch) {
          if (!iterate) record(batch);
        },
        onStatus(run) {
          seen.statuses.push(run.status);
        },
        onRoleChange(info) {
          seen.roles.push(info);
        },
        onComplete(summary) {
          seen.outcome = { status: summary.status, totalResults: summary.totalResults };
        },
        onError(error) {
          seen.outcome = { code: error.code, message: error.message };
        },
      });
      window.__poller = poller;
      const done = iterate
        ? (async () => {
            for await (const batch of poller) record(batch);
          })()
        : poller.start();
      // A stopped poller resolves quietly: record that too.
      done.then((summary) => {
        if (iterate) return;
        seen.summary = { ...summary, fields: Object.keys(summary), frozen: Object.isFrozen(summary) };
        if (summary?.status === "stopped") seen.outcome = { status: "stopped" };
      }, () => {});
    },
    { jobUid, apiKey: API_KEY, token: PROXY_TOKEN, cursor, iterate, intervalMs, maxRequests, shareKey },
  );
}

const seen = (page) => page.evaluate(() => window.__seen);
const roleOf = (page) => page.evaluate(() => window.__poller.role);
const idsOf = ({ batches }) => batches.flatMap((b) => b.ids);
const outcomeOf = (page) => page.waitForFunction(() => window.__seen?.outcome).then((handle) => handle.jsonValue());
const rowsAtLeast = (page, n) =>
  page.waitForFunction((min) => (window.__seen?.batches ?? []).reduce((sum, b) => sum + b.ids.length, 0) >= min, n);
const tabsAre = (page, n) => page.waitForFunction((count) => window.__seen?.roles.at(-1)?.tabs === count, n);
const locksHeld = (page) => page.evaluate(async () => {
  const { held = [], pending = [] } = await navigator.locks.query();
  return held.length + pending.length;
});

/** Moves the run's clock by one step, then waits until every page has every row there is. */
async function step(jobUid, pages) {
  clock.advance(RUN.durationMs / STEPS);
  const { rowsAvailable } = demo.sim.job(jobUid);
  await Promise.all(pages.map((page) => rowsAtLeast(page, rowsAvailable)));
}

/** Batches are contiguous: each starts where the one before ended (no overlap, no gap). */
function assertContiguous(record, from = 0) {
  let next = from;
  for (const { offset, ids } of record.batches) {
    assert.equal(offset, next, `batch at ${offset} after rows up to ${next}`);
    next += ids.length;
  }
}

/** The fields of index.d.ts `Summary`. */
const SUMMARY_FIELDS = ["status", "totalResults", "requests", "retries", "durationMs", "cursor"];

/** What `start()` resolved with: every field of a Summary, frozen, and this page's own requests. */
async function assertSummary(page, what) {
  const summary = await page.waitForFunction(() => window.__seen?.summary).then((handle) => handle.jsonValue());
  assert.deepEqual(summary.fields, SUMMARY_FIELDS, `${what}: the summary's fields`);
  assert.ok(summary.frozen, `${what}: the summary is frozen`);
  const sent = await page.evaluate(() => window.__fetches.length);
  assert.equal(summary.requests, sent, `${what}: the summary counts the requests this page sent`);
  assert.equal(summary.retries, 0, `${what}: no retry on a simulator without faults`);
  return summary;
}

async function assertCompleted(page, problems, what, from = 0) {
  assert.deepEqual(await outcomeOf(page), { status: "finished", totalResults: RUN.rows }, `${what} completed`);
  const record = await seen(page);
  assert.deepEqual(idsOf(record), rowIds(RUN.rows).slice(from), `${what}: every row once, in order`);
  assertContiguous(record, from);
  assert.deepEqual(problems, [], `${what} has no errors`);
  if (!(await page.evaluate(() => window.__seen.iterating))) await assertSummary(page, what); // a for-await loop gets no summary
}

/** `n` pages on a run that waits for them; the run then moves step by step to its end. */
async function pollWithPages(n) {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const pages = [];
  for (let i = 0; i < n; i += 1) {
    const opened = await openPage(context);
    await startPoller(opened.page, jobUid);
    pages.push(opened);
  }
  await Promise.all(pages.map(({ page }) => tabsAre(page, n)));
  const before = demo.sim.stats(jobUid).requests.total; // while they opened, the run did not move
  await step(jobUid, pages.map((p) => p.page));
  // Roles mid-run, once the first rows reached every page (at the end each page lets go of the
  // lock as it ends, and a page still finishing may hold it for that moment).
  const roles = await Promise.all(pages.map(({ page }) => roleOf(page)));
  for (let i = 1; i < STEPS; i += 1) await step(jobUid, pages.map((p) => p.page));
  for (const [i, { page, problems }] of pages.entries()) await assertCompleted(page, problems, `page ${i}`);
  const requests = demo.sim.stats(jobUid).requests.total - before;
  const posted = await Promise.all(pages.map(({ page }) => page.evaluate(() => window.__posted)));
  const locks = await Promise.all(pages.map(({ page }) => locksHeld(page)));
  await context.close();
  return { roles, posted, requests, locks };
}

test("1, 3 and 5 pages on one run: every row once, in order, for one page's requests; nothing held after", async (t) => {
  const counts = [];
  for (const n of [1, 3, 5]) {
    const run = await pollWithPages(n);
    counts.push(run.requests);
    assert.equal(run.roles.filter((r) => r === "leader").length, 1, `one leader: ${run.roles}`);
    assert.deepEqual(run.locks, run.locks.map(() => 0), "no lock held or requested after the end");
    const messages = run.posted.flat();
    if (n > 1) assert.ok(messages.some((m) => m.includes('"type":"batch"')), "the leader posted its batches");
    for (const message of messages) {
      assert.ok(!message.includes(API_KEY), `API key in ${message.slice(0, 200)}`);
      assert.ok(!message.includes(PROXY_TOKEN), `header in ${message.slice(0, 200)}`);
    }
  }
  t.diagnostic(`requests for 1/3/5 pages on one run: ${counts.join("/")}`);
  assert.ok(counts[2] <= 1.5 * counts[0], `${counts[2]} requests for 5 pages, ${counts[0]} for one`);
});

test("a hidden leader with a visible follower polls at the visible pace", async (t) => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const leader = await openPage(context, { hidden: true });
  await startPoller(leader.page, jobUid, { intervalMs: 200 }); // hiddenIntervalMs: the default minute
  const follower = await openPage(context);
  await startPoller(follower.page, jobUid, { intervalMs: 200 });
  await tabsAre(follower.page, 2);
  assert.equal(await roleOf(leader.page), "leader");
  // Hidden pace would be one read a minute: ten reads within the bound are the visible pace.
  const count = () => leader.page.evaluate(() => window.__fetches.length);
  const from = await count();
  await leader.page.waitForFunction((n) => window.__fetches.length >= n + 10, from);
  const times = await leader.page.evaluate(() => window.__fetches.slice(-10));
  const gaps = times.slice(1).map((x, i) => x - times[i]).sort((a, b) => a - b);
  t.diagnostic(`hidden leader, visible follower: median ${Math.round(gaps[4])} ms between requests (intervalMs 200, hiddenIntervalMs 60000)`);
  assert.ok(gaps[4] < 2000, `median gap ${gaps[4]} ms`);
  for (let i = 0; i < STEPS; i += 1) await step(jobUid, [leader.page, follower.page]);
  await assertCompleted(follower.page, follower.problems, "the follower");
  await context.close();
});

test("a leader that runs out of its own maxRequests hands over: the follower without a budget completes", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const leader = await openPage(context);
  await startPoller(leader.page, jobUid, { maxRequests: 4 });
  const follower = await openPage(context);
  await startPoller(follower.page, jobUid);
  const outcome = await outcomeOf(leader.page);
  assert.equal(outcome.code, "BUDGET_EXHAUSTED");
  assert.match(outcome.message, /maxRequests \(4\)/);
  await follower.page.waitForFunction(() => window.__poller.role === "leader");
  for (let i = 0; i < STEPS; i += 1) await step(jobUid, [follower.page]);
  await assertCompleted(follower.page, follower.problems, "the follower");
  await context.close();
});

test("a failure webhook relayed by a follower keeps its text: every page fails with it", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob({ ...RUN, outcome: "stopped" }); // the API gives no error message
  const slow = { intervalMs: 60000 }; // without the webhook, the next read is a minute away
  const leader = await openPage(context);
  await startPoller(leader.page, jobUid, slow);
  const follower = await openPage(context);
  await startPoller(follower.page, jobUid, slow);
  await tabsAre(follower.page, 2);
  await leader.page.waitForFunction(() => window.__seen.statuses.length > 0); // it has read once and sleeps
  demo.sim.finish(jobUid, "stopped");
  await follower.page.evaluate(
    (uid) => window.__poller.webhookReceived({ job_uid: uid, message: "Job failed.", error: "quota exceeded", project_uid: "p" }),
    jobUid,
  );
  for (const { page } of [leader, follower]) {
    const outcome = await outcomeOf(page);
    assert.equal(outcome.code, "JOB_FAILED");
    assert.match(outcome.message, /quota exceeded/);
    assert.equal(await locksHeld(page), 0);
  }
  await context.close();
});

test("the leader's page closes and a follower stops mid-run: the others take over with every row once", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const pages = [];
  for (let i = 0; i < 4; i += 1) {
    const opened = await openPage(context);
    await startPoller(opened.page, jobUid, { iterate: i === 2 });
    pages.push(opened);
  }
  await tabsAre(pages[0].page, 4);
  await step(jobUid, pages.map((p) => p.page));
  assert.equal(await roleOf(pages[0].page), "leader", "the first page leads");
  await pages[0].page.close();
  const quitter = pages[3].page;
  await quitter.evaluate(() => window.__poller.stop());
  assert.deepEqual(await outcomeOf(quitter), { status: "stopped" }, "stop() ends that page only, quietly");
  const stopped = await assertSummary(quitter, "the stopped page");
  assert.equal(stopped.totalResults, idsOf(await seen(quitter)).length, "the stopped page's totalResults are the rows it delivered");
  const rest = pages.slice(1, 3);
  await step(jobUid, rest.map((p) => p.page));
  // Mid-run, once the rows after the close reached both pages: one of them polls for the other.
  // (Read before the end: as each page ends it lets go of the lock, and the other may lead for
  // the moment it still needs.)
  const roles = await Promise.all(rest.map(({ page }) => roleOf(page)));
  assert.deepEqual([...roles].sort(), ["follower", "leader"], "one remaining page took over");
  for (let i = 2; i < STEPS; i += 1) await step(jobUid, rest.map((p) => p.page));
  for (const { page, problems } of rest) await assertCompleted(page, problems, "a remaining page");
  await context.close();
});

test("a page that joins late gets the earlier rows first; a page resuming from a cursor gets the rows after it", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const first = await openPage(context);
  const sharing = []; // the first page's loads of the tab protocol
  first.page.on("request", (request) => /\/tabs-shared\.js$/.test(request.url()) && sharing.push(request.url()));
  await startPoller(first.page, jobUid);
  await step(jobUid, [first.page]);
  await step(jobUid, [first.page]);
  assert.deepEqual(sharing, [], "a page polling the run alone loads no tab protocol");
  assert.equal(await roleOf(first.page), "leader");
  const { batches } = await seen(first.page);
  const cursor = batches[1].cursor;
  const resumeAt = batches[0].ids.length + batches[1].ids.length;

  const late = await openPage(context);
  await startPoller(late.page, jobUid);
  const resumed = await openPage(context);
  await startPoller(resumed.page, jobUid, { cursor });
  const { rowsAvailable } = demo.sim.job(jobUid);
  await rowsAtLeast(late.page, rowsAvailable);
  const lateRecord = await seen(late.page);
  assert.equal(lateRecord.batches[0].offset, 0, "the late page starts at the first row");
  assert.equal(await roleOf(late.page), "follower");
  assert.equal(await roleOf(first.page), "leader", "the first page hands over to the protocol and leads on");
  assert.equal(sharing.length, 1, "the first page loaded the tab protocol once another page shared the run");
  for (let i = 2; i < STEPS; i += 1) await step(jobUid, [first.page, late.page]);
  await assertCompleted(late.page, late.problems, "the late page");
  await assertCompleted(resumed.page, resumed.problems, "the resumed page", resumeAt);
  await context.close();
});

test("shareAcrossTabs: false polls alone; a wrong value is a TypeError naming the option", async () => {
  const context = await newContext();
  const { page } = await openPage(context);
  const result = await page.evaluate(async () => {
    const { JobPoller } = await import("captaindata-poller");
    const base = { jobUid: "job-x", baseUrl: `${location.origin}/v3` };
    const errorOf = async (options) => {
      try {
        await new JobPoller(options).start(); // throws in the constructor once the module is loaded
        return null;
      } catch (error) {
        return `${error.name}: ${error.message}`;
      }
    };
    const alone = new JobPoller({ ...base, shareAcrossTabs: false });
    const started = alone.start().catch(() => {});
    const role = alone.role;
    alone.stop();
    await started;
    return {
      alone: role,
      badShare: await errorOf({ ...base, shareAcrossTabs: "yes" }),
      badCallback: await errorOf({ ...base, onRoleChange: "show" }),
      badKey: await errorOf({ ...base, shareKey: 42 }),
    };
  });
  assert.deepEqual(result, {
    alone: "alone",
    badShare: 'TypeError: Expected `shareAcrossTabs` to be a boolean (got "yes")',
    badCallback: 'TypeError: Expected `onRoleChange` to be a function (got "show")',
    badKey: "TypeError: Expected `shareKey` to be a string (got 42)",
  });
  await context.close();
});

/**
 * Posts `messages` on the run's channel from `page`, as any script of the origin can: the
 * channel has the name of the run's lock, which navigator.locks.query() lists. Returns the name.
 */
function postOnRunChannel(page, messages) {
  return page.evaluate(async (messages) => {
    const { held } = await navigator.locks.query();
    const name = held.map((lock) => lock.name).find((n) => n.startsWith("captaindata-poller/"));
    window.__forger = new BroadcastChannel(name);
    for (const message of messages) window.__forger.postMessage(message);
    return name;
  }, messages);
}

/** The page's count of channel messages its shared poller did not read (js/tabs-shared.js). */
async function ignoredIn(page) {
  return page.evaluate(async () => {
    const { ignoredMessages } = await import("/js/tabs-shared.js"); // the module the package loaded
    window.__ignored = ignoredMessages;
    return ignoredMessages();
  });
}

const ignoredReach = (page, { malformed, notFromLeader }) =>
  page.waitForFunction(([m, n]) => {
    const now = window.__ignored();
    return now.malformed === m && now.notFromLeader === n;
  }, [malformed, notFromLeader]);

test("a malformed or forged message on the run's channel is ignored and counted: no page's callbacks see it", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const leader = await openPage(context);
  await startPoller(leader.page, jobUid);
  const follower = await openPage(context);
  await startPoller(follower.page, jobUid);
  await tabsAre(follower.page, 2);
  const pages = [leader.page, follower.page];
  await step(jobUid, pages); // rows reached the follower: it knows its leader
  const [fromLeader, fromFollower] = await Promise.all(pages.map(ignoredIn));
  const next = demo.sim.job(jobUid).rowsAvailable; // a forged batch there would be taken if it were read
  const name = await postOnRunChannel(follower.page, [
    42,
    { type: "batch", from: "mallory", offset: "0", results: "rows", cursor: 1 },
    { type: "batch", from: "mallory", offset: next, results: [{ id: "forged-row" }], cursor: "forged" },
    { type: "end", from: "mallory", outcome: { summary: { status: "finished" } }, total: 0 },
    { type: "end", from: "mallory", outcome: { error: { code: "JOB_FAILED", message: "forged end" } }, total: 0 },
    { type: "webhook", from: "mallory", payload: { job_uid: "another-run", message: "Job failed." } },
  ]);
  assert.ok(!name.includes(API_KEY) && !name.includes(PROXY_TOKEN), `credentials in the lock's name ${name}`);
  // The follower: two malformed, three well formed but not from its leader (a relayed webhook
  // is the leader's business); the leader's poller also refuses the other run's webhook.
  await ignoredReach(follower.page, { malformed: fromFollower.malformed + 2, notFromLeader: fromFollower.notFromLeader + 3 });
  await ignoredReach(leader.page, { malformed: fromLeader.malformed + 3, notFromLeader: fromLeader.notFromLeader + 3 });
  for (let i = 1; i < STEPS; i += 1) await step(jobUid, pages);
  await assertCompleted(leader.page, leader.problems, "the leader");
  await assertCompleted(follower.page, follower.problems, "the follower");
  await context.close();
});

test("shareKey: only pollers given the same key share; the key is not in the lock's name", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const [KEY_A, KEY_B] = ["team-a-7f3e", "team-b-91c0"];
  const a = await openPage(context);
  await startPoller(a.page, jobUid, { shareKey: KEY_A });
  const b = await openPage(context);
  await startPoller(b.page, jobUid, { shareKey: KEY_B });
  const c = await openPage(context);
  await startPoller(c.page, jobUid, { shareKey: KEY_A });
  await Promise.all([tabsAre(a.page, 2), tabsAre(c.page, 2)]);
  await b.page.waitForFunction(() => window.__poller.role === "leader");
  assert.deepEqual(await Promise.all([a, b, c].map(({ page }) => roleOf(page))), ["leader", "leader", "follower"]);
  const held = await a.page.evaluate(async () => (await navigator.locks.query()).held.map((lock) => lock.name));
  const names = held.filter((name) => name.includes(jobUid));
  assert.equal(new Set(names).size, 2, `one lock per key: ${names}`);
  for (const name of names) assert.ok(!name.includes(KEY_A) && !name.includes(KEY_B), `the key in ${name}`);
  const pages = [a, b, c].map(({ page }) => page);
  for (let i = 0; i < STEPS; i += 1) await step(jobUid, pages);
  for (const [what, { page, problems }] of Object.entries({ a, b, c })) await assertCompleted(page, problems, `page ${what}`);
  assert.deepEqual((await seen(b.page)).roles.map((r) => r.tabs), [1], "the page with its own key never shared");
  assert.ok((await b.page.evaluate(() => window.__fetches.length)) > 0, "it polled for itself");
  // c shares a's poller. While a hands its lone lock over to the sharing layer, c can be
  // granted the lock for a moment and read once (1 run in 5 here); a page that polled for
  // itself, as b does, reads on every step.
  const cFetches = await c.page.evaluate(() => window.__fetches.length);
  assert.ok(cFetches <= 1, `the page that shares a's key polled at most during the hand-over: ${cFetches} requests`);
  await context.close();
});

test("the demo shows this tab's role and how many tabs share the poller", async () => {
  const demoClock = manualClock(0);
  const simDemo = await startDemoServer({ port: 0, sim: createSim({ clock: demoClock }) }); // the demo's own credentials
  const context = await browser.newContext();
  try {
    const open = async () => {
      const page = await context.newPage();
      await page.goto(simDemo.url);
      await page.waitForSelector("body[data-ready=true]");
      return page;
    };
    const first = await open();
    const jobUid = await startSimulatedRun(first, { inputs: 200, durationS: 3, pageSize: 40, intervalMs: 150 });
    await first.locator("#tab-share").getByText("leader · 1 tab").waitFor();
    const second = await open();
    const poll = second.locator("#poll-form");
    await poll.getByLabel("jobUid").fill(jobUid);
    await poll.getByLabel("Poll every (ms)").fill("150");
    await poll.getByRole("button", { name: "Poll this run" }).click();
    await second.locator("#tab-share").getByText("follower · 2 tabs").waitFor();
    await first.locator("#tab-share").getByText("leader · 2 tabs").waitFor();
    demoClock.advance(3000); // the run's clock is the test's: it ends now
    for (const page of [first, second]) {
      await waitForState(page, "completed");
      // The table draws in animation frames: wait for the last one.
      await untilRowsHeld(page, 200, { polling: 100 });
      assert.deepEqual(await shownRowIds(page), rowIds(200));
    }
  } finally {
    await context.close();
    await simDemo.close();
  }
});
