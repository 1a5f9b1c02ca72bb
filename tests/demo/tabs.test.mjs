// Tabs of one origin share one poller (js/tabs.js): pages of one browser context poll the same
// simulated run through the package. Every page gets every row once and in order, the simulator
// sees about one page's requests, a closed leader is replaced, a late page catches up, and the
// API key never travels between tabs.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createSim } from "../../sim/index.js";
import { startDemoServer } from "../../scripts/start.mjs";
import { launchBrowser, rowIds, shownRowIds, startSimulatedRun, waitForState, watchConsole } from "./browser-fixture.mjs";

const API_KEY = "sk-tabs-5e1f0c7d-do-not-share"; // distinctive: searched for in every channel message
const PROXY_TOKEN = "proxy-token-8b2a61";
const RUN = { rows: 300, durationMs: 3000, pageSize: 40 };

let demo;
let browser;
before(async () => {
  [demo, browser] = await Promise.all([startDemoServer({ port: 0, sim: createSim({ apiKey: API_KEY }) }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

/** A browser context whose pages record every message they post on a BroadcastChannel. */
async function newContext() {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    const posted = (window.__posted = []);
    const post = BroadcastChannel.prototype.postMessage;
    BroadcastChannel.prototype.postMessage = function record(message) {
      posted.push(JSON.stringify(message));
      return post.call(this, message);
    };
  });
  return context;
}

async function openPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const problems = watchConsole(page);
  await page.goto(demo.url);
  await page.waitForSelector("body[data-ready=true]");
  return { page, problems };
}

/**
 * Starts a JobPoller in the page, imported by name as an app would; what it hands to the
 * callbacks is recorded in `window.__seen`.
 */
function startPoller(page, jobUid, { cursor, iterate = false, intervalMs = 100 } = {}) {
  return page.evaluate(
    async ({ jobUid, apiKey, token, cursor, iterate, intervalMs }) => {
      const { JobPoller } = await import("captaindata-poller");
      const seen = (window.__seen = { batches: [], roles: [], statuses: [], outcome: null });
      const record = (batch) => seen.batches.push({ offset: batch.offset, ids: batch.results.map((row) => row.id), cursor: batch.cursor });
      const poller = new JobPoller({
        jobUid,
        baseUrl: `${location.origin}/v3`,
        apiKey,
        projectId: "sim-project",
        headers: { "x-proxy-token": token },
        cursor,
        intervalMs,
        statusEvery: 2,
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
          seen.outcome = { code: error.code };
        },
      });
      window.__poller = poller;
      // stop() is not an error: start() resolves with a "stopped" summary.
      const stopped = (summary) => summary.status === "stopped" && (seen.outcome = { status: "stopped" });
      if (!iterate) return void poller.start().then(stopped, () => {}); // onError records errors
      queueMicrotask(() => poller.start().then(stopped, () => {})); // after the loop below started it
      (async () => {
        for await (const batch of poller) record(batch);
      })().catch(() => {});
    },
    { jobUid, apiKey: API_KEY, token: PROXY_TOKEN, cursor, iterate, intervalMs },
  );
}

const seen = (page) => page.evaluate(() => window.__seen);
const roleOf = (page) => page.evaluate(() => window.__poller.role);
const idsOf = ({ batches }) => batches.flatMap((b) => b.ids);

function outcomeOf(page) {
  return page.waitForFunction(() => window.__seen?.outcome).then((handle) => handle.jsonValue());
}

function rowsAtLeast(page, n) {
  return page.waitForFunction((min) => (window.__seen?.batches ?? []).reduce((sum, b) => sum + b.ids.length, 0) >= min, n);
}

/** Batches are contiguous: each starts where the one before ended (no overlap, no gap). */
function assertContiguous(record, from = 0) {
  let next = from;
  for (const { offset, ids } of record.batches) {
    assert.equal(offset, next, `batch at ${offset} after rows up to ${next}`);
    next += ids.length;
  }
}

/** Opens `n` pages on one run, one after the other, and waits for every outcome. */
async function pollWithPages(n) {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob(RUN);
  const pages = [];
  for (let i = 0; i < n; i += 1) {
    const opened = await openPage(context);
    await startPoller(opened.page, jobUid);
    pages.push(opened);
  }
  const outcomes = await Promise.all(pages.map(({ page }) => outcomeOf(page)));
  const records = await Promise.all(pages.map(({ page }) => seen(page)));
  const roles = await Promise.all(pages.map(({ page }) => roleOf(page)));
  const posted = await Promise.all(pages.map(({ page }) => page.evaluate(() => window.__posted)));
  return { context, jobUid, pages, outcomes, records, roles, posted, requests: demo.sim.stats(jobUid).requests.total };
}

function assertEveryRowOnce({ outcomes, records, pages }) {
  for (const [i, record] of records.entries()) {
    assert.deepEqual(outcomes[i], { status: "finished", totalResults: RUN.rows }, `page ${i} completed`);
    assert.deepEqual(idsOf(record), rowIds(RUN.rows), `page ${i}: every row once, in order`);
    assertContiguous(record);
    assert.deepEqual(pages[i].problems, [], `page ${i} has no errors`);
  }
}

let baseline; // requests of one page alone on a run like RUN

test("one page: it leads, and its requests are the baseline", async (t) => {
  const one = await pollWithPages(1);
  assertEveryRowOnce(one);
  assert.deepEqual(one.roles, ["leader"]);
  assert.deepEqual(one.records[0].roles.at(-1), { role: "leader", tabs: 1 });
  baseline = one.requests;
  t.diagnostic(`1 page: ${baseline} requests`);
  await one.context.close();
});

for (const n of [2, 5]) {
  test(`${n} pages on one run: each gets every row once, in order, for about one page's requests`, async (t) => {
    assert.ok(baseline > 0, "the one-page test ran first");
    const run = await pollWithPages(n);
    t.diagnostic(`${n} pages: ${run.requests} requests (1 page: ${baseline})`);
    assertEveryRowOnce(run);
    assert.equal(run.roles.filter((r) => r === "leader").length, 1, `one leader: ${run.roles}`);
    assert.equal(run.roles.filter((r) => r === "follower").length, n - 1);
    assert.ok(run.requests <= 1.5 * baseline, `${run.requests} requests for ${n} pages, ${baseline} for one`);
    // Every follower saw the run's statuses too, ending with the final one.
    for (const record of run.records) assert.equal(record.statuses.at(-1), "finished");
    await run.context.close();
  });
}

test("the API key and the headers never go on the channel between tabs", async () => {
  const run = await pollWithPages(2);
  const messages = run.posted.flat();
  assert.ok(messages.some((m) => m.includes('"type":"batch"')), "the leader posted its batches");
  for (const message of messages) {
    assert.ok(!message.includes(API_KEY), `API key in ${message.slice(0, 200)}`);
    assert.ok(!message.includes(PROXY_TOKEN), `header in ${message.slice(0, 200)}`);
  }
  await run.context.close();
});

test("the leader's page closes mid-run: the others take over and still get every row once", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob({ ...RUN, durationMs: 4000 });
  const pages = [];
  for (let i = 0; i < 4; i += 1) {
    const opened = await openPage(context);
    await startPoller(opened.page, jobUid);
    pages.push(opened);
  }
  const leader = pages[0].page;
  await rowsAtLeast(leader, 60);
  assert.equal(await roleOf(leader), "leader", "the first page leads");
  await leader.close();
  // A follower that stops ends only its own poller.
  const quitter = pages[3].page;
  await quitter.evaluate(() => window.__poller.stop());
  assert.deepEqual(await outcomeOf(quitter), { status: "stopped" });

  const rest = pages.slice(1, 3);
  for (const { page, problems } of rest) {
    assert.deepEqual(await outcomeOf(page), { status: "finished", totalResults: RUN.rows });
    const record = await seen(page);
    assert.deepEqual(idsOf(record), rowIds(RUN.rows), "every row once, in order, across the takeover");
    assertContiguous(record);
    assert.deepEqual(problems, []);
  }
  const roles = await Promise.all(rest.map(({ page }) => roleOf(page)));
  assert.deepEqual([...roles].sort(), ["follower", "leader"], "one remaining page took over");
  assert.ok(demo.sim.job(jobUid).status === "finished");
  await context.close();
});

test("stop() in the leader hands the polling over: a follower's for-await loop gets every row", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob({ ...RUN, durationMs: 4000 });
  const leader = await openPage(context);
  await startPoller(leader.page, jobUid);
  const follower = await openPage(context);
  await startPoller(follower.page, jobUid, { iterate: true });
  await rowsAtLeast(follower.page, 60);
  await leader.page.evaluate(() => window.__poller.stop());
  assert.deepEqual(await outcomeOf(leader.page), { status: "stopped" });

  assert.deepEqual(await outcomeOf(follower.page), { status: "finished", totalResults: RUN.rows });
  const record = await seen(follower.page);
  assert.deepEqual(idsOf(record), rowIds(RUN.rows));
  assertContiguous(record);
  assert.equal(await roleOf(follower.page), "leader");
  const roles = record.roles.map((r) => r.role).filter((role, i, all) => role !== all[i - 1]);
  assert.deepEqual(roles, ["follower", "leader"], "onRoleChange told the page it took over");
  assert.deepEqual(follower.problems, []);
  await context.close();
});

test("a page that joins late gets the earlier rows first, then the live ones", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob({ ...RUN, durationMs: 4000 });
  const first = await openPage(context);
  await startPoller(first.page, jobUid);
  await rowsAtLeast(first.page, 100);

  const late = await openPage(context);
  await startPoller(late.page, jobUid);
  await rowsAtLeast(late.page, 1);
  const { batches } = await seen(late.page);
  assert.equal(batches[0].offset, 0, "the late page starts at the first row");
  assert.ok(batches[0].ids.length >= 100, `its first batch holds the ${batches[0].ids.length} rows it missed`);
  assert.equal(await roleOf(late.page), "follower");
  assert.equal(await roleOf(first.page), "leader");

  assert.deepEqual(await outcomeOf(late.page), { status: "finished", totalResults: RUN.rows });
  assert.deepEqual(idsOf(await seen(late.page)), rowIds(RUN.rows));
  assert.deepEqual(late.problems, []);
  await context.close();
});

test("a page resuming from a cursor gets the rows after it; a page starting over gets them all", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob({ ...RUN, durationMs: 4000 });
  // An earlier visit stopped after some rows and saved the cursor.
  const earlier = await openPage(context);
  await startPoller(earlier.page, jobUid);
  await rowsAtLeast(earlier.page, 80);
  await earlier.page.evaluate(() => window.__poller.stop());
  const { batches } = await seen(earlier.page);
  const { cursor } = batches.at(-1);
  const resumeAt = idsOf({ batches }).length;
  await earlier.page.close();

  const resumed = await openPage(context);
  await startPoller(resumed.page, jobUid, { cursor });
  const fresh = await openPage(context);
  await startPoller(fresh.page, jobUid);
  // The resumed page shares (its cursor was understood) and leads: it started first.
  await resumed.page.waitForFunction(() => window.__poller.role === "leader");
  assert.equal(await roleOf(fresh.page), "follower");

  assert.deepEqual(await outcomeOf(resumed.page), { status: "finished", totalResults: RUN.rows });
  const resumedRecord = await seen(resumed.page);
  assert.deepEqual(idsOf(resumedRecord), rowIds(RUN.rows).slice(resumeAt), `rows after the cursor (${resumeAt}) once`);
  assertContiguous(resumedRecord, resumeAt);
  // The leader kept only rows from its cursor on: the fresh page read the first ones itself.
  assert.deepEqual(await outcomeOf(fresh.page), { status: "finished", totalResults: RUN.rows });
  assert.deepEqual(idsOf(await seen(fresh.page)), rowIds(RUN.rows));
  await context.close();
});

test("a run that fails ends every page's poller with the same error", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob({ ...RUN, durationMs: 800, outcome: "shutdown" });
  const pages = [await openPage(context), await openPage(context)];
  for (const { page } of pages) await startPoller(page, jobUid);
  for (const { page } of pages) assert.deepEqual(await outcomeOf(page), { code: "JOB_FAILED" });
  const seenCount = demo.sim.stats(jobUid).log.length;
  // Another page opened now learns the outcome from the leader, without a request.
  const late = await openPage(context);
  await startPoller(late.page, jobUid);
  assert.deepEqual(await outcomeOf(late.page), { code: "JOB_FAILED" });
  assert.equal(demo.sim.stats(jobUid).log.length, seenCount, "no request after the run failed");
  await context.close();
});

test("a webhook relayed in a follower's tab makes the leader read at once: every page completes", async () => {
  const context = await newContext();
  const { jobUid } = demo.sim.createJob({ ...RUN, durationMs: 60000 });
  const slow = { intervalMs: 30000 }; // without the webhook, the next read would be 30 s away
  const leader = await openPage(context);
  await startPoller(leader.page, jobUid, slow);
  await leader.page.waitForFunction(() => window.__poller.role === "leader");
  const follower = await openPage(context);
  await startPoller(follower.page, jobUid, slow);
  await follower.page.waitForFunction(() => window.__seen.roles.some((r) => r.tabs === 2));
  await leader.page.waitForFunction(() => window.__seen.statuses.length > 0); // it has read once and sleeps

  demo.sim.finish(jobUid);
  await follower.page.evaluate((uid) => window.__poller.webhookReceived({ job_uid: uid, message: "Job successfully finished." }), jobUid);
  for (const { page } of [leader, follower]) {
    assert.deepEqual(await outcomeOf(page), { status: "finished", totalResults: RUN.rows });
    assert.deepEqual(idsOf(await seen(page)), rowIds(RUN.rows));
  }
  await context.close();
});

test("shareAcrossTabs: false polls alone; a wrong value is a TypeError naming the option", async () => {
  const context = await newContext();
  const { page } = await openPage(context);
  const result = await page.evaluate(async () => {
    const { JobPoller } = await import("captaindata-poller");
    const base = { jobUid: "job-x", baseUrl: `${location.origin}/v3` };
    const errorOf = (options) => {
      try {
        return new JobPoller(options) && null;
      } catch (error) {
        return `${error.name}: ${error.message}`;
      }
    };
    return {
      alone: new JobPoller({ ...base, shareAcrossTabs: false }).role,
      shared: new JobPoller(base).role,
      badShare: errorOf({ ...base, shareAcrossTabs: "yes" }),
      badCallback: errorOf({ ...base, onRoleChange: "show" }),
    };
  });
  assert.deepEqual(result, {
    alone: "alone",
    shared: "follower", // until start() elects
    badShare: 'TypeError: Expected `shareAcrossTabs` to be a boolean (got "yes")',
    badCallback: 'TypeError: Expected `onRoleChange` to be a function (got "show")',
  });
  await context.close();
});

test("the demo shows this tab's role and how many tabs share the poller", async () => {
  const simDemo = await startDemoServer({ port: 0 });
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
    for (const page of [first, second]) {
      await waitForState(page, "completed");
      // The table draws in animation frames: wait for the last one.
      await page.waitForFunction(() => document.querySelectorAll("#results tbody tr").length >= 200, null, { polling: 100 });
      assert.deepEqual(await shownRowIds(page), rowIds(200));
    }
  } finally {
    await context.close();
    await simDemo.close();
  }
});
