// The demo page in headless Chromium against `startDemoServer` (simulator on the same origin):
// what a person sees while a run goes, after a stop and a reload, and when the run's inputs fail.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startDemoServer } from "../../scripts/start.mjs";
import { startSimServer } from "../../sim/server.mjs";
import { simChanges, until } from "../support/until.mjs";
import { heldRowCount, launchBrowser, outputPath, rowIds, shownRowIds, startSimulatedRun, trackPackageTimers, untilPackageQuiet, waitForState, watchConsole, untilRowsHeld } from "./browser-fixture.mjs";

let demo;
let browser;
before(async () => {
  [demo, browser] = await Promise.all([startDemoServer({ port: 0 }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

async function openDemo() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(trackPackageTimers);
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const problems = watchConsole(page);
  await page.goto(demo.url);
  await page.waitForSelector("body[data-ready=true]");
  return { context, page, problems };
}

/** "2.07 MB" / "≈ 6.5 MB" / "812 B" as the page shows it → bytes. */
function shownBytes(text) {
  const found = /([\d.]+) (B|KB|MB)/.exec(text);
  assert.ok(found, `a byte figure: ${text}`);
  return Number(found[1]) * { B: 1, KB: 1024, MB: 1048576 }[found[2]];
}

/** What the comparison card shows once the run ended. */
async function comparison(page) {
  await page.waitForFunction(() => document.querySelector("#n-naive-bytes").textContent !== "—", null, { timeout: 30000 });
  const text = (id) => page.locator(id).textContent();
  return {
    ours: { requests: Number(await text("#n-ours-req")), bytes: shownBytes(await text("#n-ours-bytes")) },
    naive: { requests: Number(await text("#n-naive-req")), bytes: shownBytes(await text("#n-naive-bytes")) },
    note: await text("#naive-note"),
  };
}

test("the default run (3,000 rows on three 1000-row pages, in bursts): rows arrive burst by burst, and the poller downloads far less than the naive loop", async () => {
  const { context, page, problems } = await openDemo();
  // The form as it opens: nothing filled in.
  await page.getByRole("button", { name: "Start simulated run" }).click();
  await page.waitForFunction(() => document.querySelector("#run-job")?.textContent !== "");
  const jobUid = await page.locator("#run-job").textContent();
  const job = demo.sim.job(jobUid);
  assert.deepEqual([job.spec.rows, job.spec.pageSize, job.spec.arrival], [3000, 1000, { bursts: 5 }]);
  // The first burst is shown while the run goes on: 600 rows at once, not a trickle.
  await page.waitForFunction(() => document.querySelector("#c-rows").textContent !== "0");
  assert.equal(await page.locator("#c-rows").textContent(), "600", "the first burst, whole");
  assert.equal(demo.sim.job(jobUid).status, "running");

  await waitForState(page, "completed", 60000);
  assert.deepEqual(await shownRowIds(page), rowIds(3000));
  const { ours, naive, note } = await comparison(page);
  assert.ok(ours.bytes * 3 < naive.bytes, `the poller's bytes (${ours.bytes}) well below the naive loop's (${naive.bytes})`);
  assert.ok(ours.requests < naive.requests, `requests: ${ours.requests} vs ${naive.requests}`);
  assert.match(note, /× the bytes of this poller/);
  assert.equal(await page.locator("#naive").getAttribute("data-verdict"), "fewer-bytes");
  assert.deepEqual(problems, []);
  await context.close();
});

test("one page that grows on every tick: the page says why no poller can read less instead of showing a ratio", async () => {
  const { context, page } = await openDemo();
  await page.locator("#sim-form select[name=arrival]").selectOption("linear");
  await startSimulatedRun(page, { inputs: 300, durationS: 2, pageSize: 1000, intervalMs: 150 });
  await waitForState(page, "completed");
  const { ours, naive, note } = await comparison(page);
  assert.equal(await page.locator("#naive").getAttribute("data-verdict"), "one-growing-page", `ours ${ours.bytes} B, naive ${naive.bytes} B`);
  assert.match(note, /One page that grows on every tick: .*no poller can read much less here/);
  assert.doesNotMatch(note, /×/, "no ratio shown");
  await context.close();
});

test("under faults the naive figure is compared fairly: failed attempts are left out on both sides, and the page says so", async () => {
  const { context, page } = await openDemo();
  const jobUid = await startSimulatedRun(page, { inputs: 200, rowsPerInput: 5, durationS: 2, pageSize: 250, preset: "flaky", intervalMs: 150 });
  await waitForState(page, "completed", 40000);
  assert.deepEqual(await shownRowIds(page), rowIds(1000));
  const { ours, note } = await comparison(page);
  const log = demo.sim.stats(jobUid).log;
  const failed = log.filter((e) => e.fault || e.status === 0).length;
  assert.equal(ours.requests, log.length - failed, "the poller's answered reads");
  assert.ok(failed > 0, "the flaky preset failed some reads");
  assert.match(note, new RegExp(`this poller's ${failed} failed attempts? (is|are) left out too`));
  await context.close();
});

test("rows appear while the run is going, then the completed state with every row once", async () => {
  const { context, page, problems } = await openDemo();
  // A run of a minute, ended on command once the first rows are shown (however busy the machine).
  const jobUid = await startSimulatedRun(page, { inputs: 60, rowsPerInput: 5, durationS: 60, pageSize: 40, intervalMs: 150 });
  await untilRowsHeld(page, 1);
  const early = (await shownRowIds(page)).length;
  assert.equal(demo.sim.job(jobUid).status, "running", "first rows shown before the run ended");
  assert.ok(early > 0 && early < 300, `rows shown early: ${early}`);
  demo.sim.finish(jobUid);

  await waitForState(page, "completed");
  assert.deepEqual(await shownRowIds(page), rowIds(300));
  assert.match(await page.locator("#run-status").textContent(), /finished — 300 rows/);
  assert.equal(await page.locator("#progress-text").textContent(), "300 of 300 rows");
  assert.equal(await page.locator("#results-count").textContent(), "(300)");
  // The comparison appears once the run ended: the naive loop downloads more than this poller.
  await page.waitForFunction(() => document.querySelector("#n-naive-bytes").textContent !== "—");
  const ours = Number(await page.locator("#n-ours-req").textContent());
  assert.equal(ours, demo.sim.stats(jobUid).requests.total, "the page shows the requests the simulator saw");
  assert.ok(await page.locator("#timeline rect.mark.results").count() > 1, "results reads drawn on the timeline");
  await page.screenshot({ path: outputPath("demo-finished.png"), fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("stop, reload, resume: the final table has every row exactly once", async () => {
  const { context, page, problems } = await openDemo();
  // A run of half a minute, stopped by the user mid-run, then ended on command before the resume.
  const jobUid = await startSimulatedRun(page, { inputs: 400, durationS: 30, pageSize: 50, intervalMs: 150 });
  await untilRowsHeld(page, 60);
  await page.getByRole("button", { name: "Stop" }).click();
  await waitForState(page, "stopped");
  assert.equal(demo.sim.job(jobUid).status, "running", "stopped while the run was going");
  const beforeReload = await shownRowIds(page);
  assert.ok(beforeReload.length < 400, `stopped mid-run with ${beforeReload.length} rows`);
  demo.sim.finish(jobUid);

  await page.reload();
  await page.waitForSelector("#resume-offer:not([hidden])");
  assert.match(await page.locator("#resume-text").textContent(), new RegExp(jobUid));
  await page.locator("#resume-offer").getByRole("button", { name: "Resume" }).click();
  await waitForState(page, "completed");
  assert.deepEqual(await shownRowIds(page), rowIds(400), "every row once, in order");
  assert.deepEqual(problems, []);
  await context.close();
});

test("All Inputs Failed: the page says what happened and what to do; no request after it", async () => {
  const { context, page } = await openDemo();
  const jobUid = await startSimulatedRun(page, { inputs: 20, durationS: 0.3, pageSize: 10, preset: "allInputsFailed", intervalMs: 100 });
  await waitForState(page, "failed");
  assert.equal(await page.locator("#error-title").textContent(), "ALL_INPUTS_FAILED");
  assert.match(await page.locator("#error-todo").textContent(), /inputs/);
  assert.ok(await page.locator("#error").isVisible());
  const seen = demo.sim.stats(jobUid).log.length;
  // No sleep left that could wake the poller, no request in flight: nothing can follow.
  await untilPackageQuiet(page);
  const log = demo.sim.stats(jobUid).log;
  assert.equal(log.length, seen, `requests after the error: ${JSON.stringify(log.slice(seen))}`);
  assert.equal(await page.locator("#resume").isDisabled(), true, "nothing to resume after All Inputs Failed");
  await context.close();
});

test("50,000 rows: every row once, the DOM holds only the rows in view, scrolling shows any of them", async () => {
  const { context, page, problems } = await openDemo();
  // The most <tr>s the table ever holds while the rows arrive, sampled every frame.
  await page.evaluate(() => {
    window.__mostRows = 0;
    const sample = () => {
      window.__mostRows = Math.max(window.__mostRows, document.querySelector("#results tbody").rows.length);
      requestAnimationFrame(sample);
    };
    requestAnimationFrame(sample);
  });
  await startSimulatedRun(page, { inputs: 10000, rowsPerInput: 5, durationS: 3, pageSize: 1000, intervalMs: 200 });
  await untilRowsHeld(page, 20000);
  // Scrolled to the end mid-run: the last rows held are drawn at their place.
  await page.locator("#results-wrap").evaluate((el) => (el.scrollTop = el.scrollHeight));
  await waitForState(page, "completed");
  await untilRowsHeld(page, 50000, { exact: true });
  await page.locator("#results-wrap").evaluate((el) => (el.scrollTop = el.scrollHeight));
  await page.waitForFunction(() => document.querySelector("#results tbody tr:last-child")?.dataset.id === "row-49999");
  assert.equal(await page.locator("#results tbody tr:last-child").getAttribute("aria-rowindex"), "50001");
  // Halfway down: the rows drawn are the ones of that position, in order.
  await page.locator("#results-wrap").evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
  await page.waitForFunction(() => {
    const drawn = [...document.querySelectorAll("#results tbody tr")];
    return drawn.length > 0 && drawn.every((tr) => tr.dataset.id === `row-${Number(tr.getAttribute("aria-rowindex")) - 2}`) && Number(drawn[0].getAttribute("aria-rowindex")) > 20000;
  });
  const most = await page.evaluate(() => window.__mostRows);
  assert.ok(most <= 200, `the table held at most ${most} <tr>s (50,000 rows)`);
  const ids = await shownRowIds(page);
  assert.equal(ids.length, 50000);
  assert.deepEqual(ids, rowIds(50000), "every row once, in order");
  // The page still answers input after the run: typing into a field works.
  await page.locator("#job-uid").fill("typed-after-50k");
  assert.equal(await page.locator("#job-uid").inputValue(), "typed-after-50k");
  assert.deepEqual(problems, []);
  await context.close();
});

test("rows arriving below the view leave the rows shown alone: text selected in the table stays selected", async () => {
  const { context, page, problems } = await openDemo();
  // A run of a minute, ended on command once the selection has seen rows arrive.
  const jobUid = await startSimulatedRun(page, { inputs: 200, rowsPerInput: 5, durationS: 60, pageSize: 100, intervalMs: 150 });
  await untilRowsHeld(page, 100);
  const selected = await page.evaluate(() => {
    const range = document.createRange();
    range.selectNodeContents(document.querySelector('#results tbody tr[data-id="row-0"] td:nth-child(2)'));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    return getSelection().toString();
  });
  assert.notEqual(selected, "");
  const held = await heldRowCount(page);
  await untilRowsHeld(page, held + 200);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))); // a render since
  assert.ok((await heldRowCount(page)) > held, "rows arrived meanwhile");
  assert.equal(await page.evaluate(() => getSelection().toString()), selected, "the selection survived the rows that arrived");
  demo.sim.finish(jobUid);
  await waitForState(page, "completed");
  assert.deepEqual(await shownRowIds(page), rowIds(1000));
  assert.deepEqual(problems, []);
  await context.close();
});

test("settings: a real API with a wrong key shows what to check, and the key is never persisted", async () => {
  const { context, page } = await openDemo();
  const { jobUid } = demo.sim.createJob({ rows: 10, durationMs: 0 });
  await page.locator("#settings summary").click();
  const settings = page.locator("#settings-form");
  await settings.getByLabel("A real API or a proxy").check();
  await settings.getByLabel("Base URL").fill(`${demo.url}v3`);
  await settings.getByLabel("API key").fill("sk-wrong-KEY-123");
  await settings.getByLabel("Project id").fill("sim-project");
  await settings.getByRole("button", { name: "Save settings" }).click();
  assert.ok(await page.getByRole("button", { name: "Start simulated run" }).isDisabled(), "simulated runs need the simulator mode");

  const poll = page.locator("#poll-form");
  await poll.getByLabel("jobUid").fill(jobUid);
  await poll.getByLabel("Poll every (ms)").fill("100");
  await poll.getByRole("button", { name: "Poll this run" }).click();
  await waitForState(page, "failed");
  assert.equal(await page.locator("#error-title").textContent(), "UNAUTHORIZED");
  assert.match(await page.locator("#error-todo").textContent(), /API key/);
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  assert.ok(!stored.includes("sk-wrong-KEY-123"), "the key is not in localStorage");
  assert.ok(!(await page.locator("body").innerText()).includes("sk-wrong-KEY-123"), "the key is not shown anywhere");
  await context.close();
});

test("an API that answers no CORS preflight: the browser blocks the request, nothing is read", async () => {
  // The simulator on another origin, answering like a server without CORS (sim option cors: false).
  const api = await startSimServer({ cors: false });
  const { context, page, problems } = await openDemo();
  try {
    const { jobUid } = api.sim.createJob({ rows: 10, durationMs: 0 });
    await page.locator("#settings summary").click();
    const settings = page.locator("#settings-form");
    await settings.getByLabel("A real API or a proxy").check();
    await settings.getByLabel("Base URL").fill(api.url);
    await settings.getByLabel("API key").fill("sim-key");
    await settings.getByLabel("Project id").fill("sim-project");
    await settings.getByRole("button", { name: "Save settings" }).click();
    const poll = page.locator("#poll-form");
    await poll.getByLabel("jobUid").fill(jobUid);
    await poll.getByLabel("Poll every (ms)").fill("100");
    await poll.getByRole("button", { name: "Poll this run" }).click();
    // Each attempt is a refused preflight; the GET itself never leaves the browser.
    await until(() => api.sim.stats().requests.preflight >= 2, { on: [simChanges(api.sim)], timeoutMs: 10000, what: "two refused preflights" });
    const { requests } = api.sim.stats();
    assert.deepEqual([requests.run, requests.results], [0, 0], "no API request got through");
    assert.deepEqual(await shownRowIds(page), []);
    assert.ok(problems.some((p) => /CORS/i.test(p)), `the console names CORS: ${problems.join(" / ")}`);
    await page.getByRole("button", { name: "Stop" }).click();
    await waitForState(page, "stopped");
  } finally {
    await context.close();
    await api.close();
  }
});
