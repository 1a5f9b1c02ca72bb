// `captaindata-poller/vue` in a Vue 3 app built by Vite, in Chromium, against the simulator over
// HTTP: every row once, one poller's requests, 50,000 rows without a copy per batch, silence
// after unmount, a missing .wasm.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { apiFetchesAfter, apiFetchesBefore, buildApp, recordFetches, serveApp } from "../../scripts/framework-apps.mjs";
import { launchBrowser, rowIds, trackPackageTimers, untilPackageQuiet, watchConsole } from "./browser-fixture.mjs";

// The options the app gives the composable (tests/bindings/vue-app/main.js).
const APP_OPTIONS = { apiKey: "sim-key", projectId: "sim-project", intervalMs: 100, statusEvery: 2 };

let app;
let demo;
let browser;
before(async () => {
  app = await buildApp("vue-app", { dependencies: ["vue", "@vue"] });
  demo = await serveApp(app.dist);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await demo?.close();
  app?.remove();
});

async function openApp(jobUid, { query = "", route } = {}) {
  const page = await browser.newPage();
  await page.addInitScript(trackPackageTimers);
  const problems = watchConsole(page);
  await recordFetches(page);
  if (route) await page.route("**/*.wasm", route);
  await page.goto(`${demo.url}?job=${encodeURIComponent(jobUid)}${query}`);
  return { page, problems };
}

const shownIds = (page) => page.$$eval("#rows li", (items) => items.map((li) => li.textContent));
const waitForStatus = (page, status, timeout = 20000) => page.waitForSelector(`section[data-status="${status}"]`, { timeout });

test("every row once, the requests of one poller, no error", async () => {
  const spec = { rows: 120, durationMs: 1, pageSize: 25 }; // an ended run: its requests do not depend on timing
  const { jobUid } = demo.sim.createJob(spec);
  const { page, problems } = await openApp(jobUid, { query: "&share=0" });
  await waitForStatus(page, "finished");
  assert.deepEqual(await shownIds(page), rowIds(120));
  const one = demo.sim.createJob(spec).jobUid;
  await new JobPoller({ ...APP_OPTIONS, jobUid: one, baseUrl: `${demo.url}v3` }).start();
  assert.deepEqual(demo.sim.stats(jobUid).requests, demo.sim.stats(one).requests);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a growing run: rows appear while it runs, each once, in order", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 300, durationMs: 1500, pageSize: 50 });
  const { page, problems } = await openApp(jobUid);
  await page.waitForFunction(() => {
    const n = Number(document.querySelector("#count")?.textContent);
    return n > 0 && n < 300;
  }, null, { timeout: 20000 });
  await waitForStatus(page, "finished");
  assert.deepEqual(await shownIds(page), rowIds(300));
  assert.deepEqual(problems, []);
  await page.close();
});

test("50,000 rows: one update per batch, one rows array (no batch copies the rows before it)", async (t) => {
  const { jobUid } = demo.sim.createJob({ rows: 50000, durationMs: 2000, pageSize: 1000 });
  const { page, problems } = await openApp(jobUid, { query: "&list=0" });
  await waitForStatus(page, "finished", 60000);
  assert.equal(await page.locator("#count").textContent(), "50000");
  const { updates, batches, rowArrays } = await page.evaluate(() => window.app);
  // The poller's one array, appended in place (the first render, on mount, is not an update).
  assert.equal(rowArrays, 1, `${rowArrays} rows arrays rendered`);
  // Besides the batches, an update for a status or the end.
  assert.ok(updates <= 2 * batches + 5, `${updates} updates for ${batches} batches`);
  t.diagnostic(`50,000 rows: ${batches} batches, ${updates} updates, ${rowArrays} rows arrays`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("unmount (scope disposed): no request after it", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 5000, durationMs: 60000, pageSize: 1000 });
  const { page, problems } = await openApp(jobUid);
  await page.waitForFunction(() => Number(document.querySelector("#count")?.textContent) > 0, null, { timeout: 20000 });
  await page.getByRole("button", { name: "Unmount" }).click();
  const unmountedAt = await page.evaluate(() => window.app.unmountedAt);
  await untilPackageQuiet(page); // no sleep left that could wake its poller, no request in flight
  assert.deepEqual(await apiFetchesAfter(page, unmountedAt), []);
  assert.ok(demo.sim.stats(jobUid).requests.total <= (await apiFetchesBefore(page, unmountedAt)).length);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a .wasm answering 404: the app renders and `error.code` is LOAD_FAILED", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 40, durationMs: 1, pageSize: 25 });
  const { page, problems } = await openApp(jobUid, { route: (route) => route.fulfill({ status: 404, body: "Not found" }) });
  await waitForStatus(page, "failed");
  assert.equal(await page.locator("#error").textContent(), "LOAD_FAILED");
  assert.equal(await page.locator("h1").textContent(), "Vue app");
  assert.deepEqual(problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
  await page.close();
});
