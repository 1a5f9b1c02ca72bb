// `captaindata-poller/react` in a React 19 StrictMode app built by Vite, in Chromium, against
// the simulator over HTTP: what its user sees (rows, status, errors) and what the API sees.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { createElement as h } from "react";
import { renderToString } from "react-dom/server";
import { App } from "../bindings/react-app/app.js";
import { apiFetchesAfter, apiFetchesBefore, buildApp, recordFetches, serveApp } from "../../scripts/framework-apps.mjs";
import { launchBrowser, rowIds, trackPackageTimers, untilPackageQuiet, watchConsole } from "./browser-fixture.mjs";

// The options the app gives the hook (tests/bindings/react-app/main.jsx).
const APP_OPTIONS = { apiKey: "sim-key", projectId: "sim-project", intervalMs: 100, statusEvery: 2 };

let app;
let demo;
let browser;
before(async () => {
  app = await buildApp("react-app", { dependencies: ["react", "react-dom", "scheduler"] });
  demo = await serveApp(app.dist);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await demo?.close();
  app?.remove();
});

async function openApp(jobUid, { query = "", route, serverHtml } = {}) {
  const page = await browser.newPage();
  await page.addInitScript(trackPackageTimers);
  const problems = watchConsole(page);
  await recordFetches(page);
  if (route) await page.route("**/*.wasm", route);
  if (serverHtml) {
    // The page as a server would send it: the app already rendered into #root.
    await page.route(/\/(\?.*)?$/, async (r) => {
      const body = (await (await r.fetch()).text()).replace('<div id="root"></div>', `<div id="root">${serverHtml}</div>`);
      await r.fulfill({ body, contentType: "text/html" });
    });
  }
  await page.goto(`${demo.url}?job=${encodeURIComponent(jobUid)}${query}`);
  return { page, problems };
}

const shownIds = (page) => page.$$eval("#rows li", (items) => items.map((li) => li.textContent));
const waitForStatus = (page, status, timeout = 20000) => page.waitForSelector(`section[data-status="${status}"]`, { timeout });

/** Requests a lone JobPoller in Node makes on a run of the same spec, with the app's options. */
async function requestsOfOnePoller(spec) {
  const { jobUid } = demo.sim.createJob(spec);
  await new JobPoller({ ...APP_OPTIONS, jobUid, baseUrl: `${demo.url}v3` }).start();
  return demo.sim.stats(jobUid).requests;
}

test("StrictMode: every row once, the requests of one poller, no error anywhere", async () => {
  const spec = { rows: 120, durationMs: 1, pageSize: 25 }; // an ended run: its requests do not depend on timing
  const { jobUid } = demo.sim.createJob(spec);
  // Not shared across tabs: a second poller would make requests of its own, not hide as a follower.
  const { page, problems } = await openApp(jobUid, { query: "&share=0" });
  await waitForStatus(page, "finished");
  assert.deepEqual(await shownIds(page), rowIds(120));
  assert.deepEqual(demo.sim.stats(jobUid).requests, await requestsOfOnePoller(spec));
  assert.equal(await page.locator("#error").textContent(), "");
  assert.deepEqual(problems, []);
  await page.close();
});

test("StrictMode on a growing run: every row once, in order, and it finishes", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 300, durationMs: 1500, pageSize: 50 });
  const { page, problems } = await openApp(jobUid);
  await waitForStatus(page, "polling");
  await waitForStatus(page, "finished");
  assert.deepEqual(await shownIds(page), rowIds(300));
  assert.deepEqual(problems, []);
  await page.close();
});

test("server-rendered: hydration matches (idle), then the rows arrive", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 60, durationMs: 300, pageSize: 25 });
  const serverHtml = renderToString(h(App, { jobUid }));
  assert.match(serverHtml, /data-status="idle"/);
  const { page, problems } = await openApp(jobUid, { serverHtml });
  await waitForStatus(page, "finished");
  assert.deepEqual(await shownIds(page), rowIds(60));
  assert.deepEqual(problems, [], "no hydration mismatch or other error");
  await page.close();
});

test("unmount: no request after it, no error", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 5000, durationMs: 60000, pageSize: 1000 });
  const { page, problems } = await openApp(jobUid);
  await page.waitForFunction(() => Number(document.querySelector("#count")?.textContent) > 0, null, { timeout: 20000 });
  await page.getByRole("button", { name: "Unmount" }).click();
  const unmountedAt = await page.evaluate(() => window.app.unmountedAt);
  assert.ok(unmountedAt !== null, "the component was unmounted");
  // No sleep left that could wake its poller, no request in flight: nothing can follow.
  await untilPackageQuiet(page);
  assert.deepEqual(await apiFetchesAfter(page, unmountedAt), []);
  // And the API saw no request the page did not send before the unmount.
  const sentBefore = (await apiFetchesBefore(page, unmountedAt)).length;
  assert.ok(demo.sim.stats(jobUid).requests.total <= sentBefore, "the API saw only requests sent before the unmount");
  assert.deepEqual(problems, []);
  await page.close();
});

test("a late .wasm: the app renders first, then the rows arrive", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 40, durationMs: 1, pageSize: 25 });
  // The scenario: a slow .wasm, held until the app has rendered (an app that waited for it would never render).
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const { page, problems } = await openApp(jobUid, {
    route: async (route) => {
      await held;
      await route.continue();
    },
  });
  await page.waitForFunction(() => window.app.firstRenderAt !== null);
  assert.equal(await page.locator("#status").textContent(), "loading");
  release();
  await waitForStatus(page, "finished");
  assert.deepEqual(await shownIds(page), rowIds(40));
  const timing = await page.evaluate(() => ({
    firstRender: window.app.firstRenderAt,
    wasm: performance.getEntriesByType("resource").find((e) => e.name.endsWith(".wasm"))?.responseEnd,
  }));
  console.log(`first render ${timing.firstRender.toFixed(0)} ms, .wasm arrived ${timing.wasm?.toFixed(0)} ms after navigation`);
  assert.ok(timing.firstRender < timing.wasm);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a .wasm answering 404: the app renders and the hook's error is LOAD_FAILED", async () => {
  const { jobUid } = demo.sim.createJob({ rows: 40, durationMs: 1, pageSize: 25 });
  const { page, problems } = await openApp(jobUid, { route: (route) => route.fulfill({ status: 404, body: "Not found" }) });
  await waitForStatus(page, "failed");
  assert.equal(await page.locator("#error").textContent(), "LOAD_FAILED");
  assert.match(await page.locator("#error").getAttribute("title"), /\.wasm: HTTP 404/, "the message names the URL and the reason");
  assert.equal(await page.locator("h1").textContent(), "React app");
  // The browser itself logs the failed resource load; nothing else may complain.
  assert.deepEqual(problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
  await page.close();
});

test("50,000 rows: one re-render per batch, not per row, and one rows array (no batch copies the rows before it)", async (t) => {
  const { jobUid } = demo.sim.createJob({ rows: 50000, durationMs: 2000, pageSize: 1000 });
  const { page, problems } = await openApp(jobUid, { query: "&list=0" });
  await waitForStatus(page, "finished", 60000);
  assert.equal(await page.locator("#count").textContent(), "50000");
  const { renders, batches, rowsPerRender, rowArrays } = await page.evaluate(() => window.app);
  // The idle snapshot's empty array, then the poller's one array, appended in place.
  assert.ok(rowArrays <= 2, `${rowArrays} rows arrays rendered`);
  const distinct = new Set(rowsPerRender).size - 1; // row counts rendered, past 0
  // StrictMode renders each component twice in development; a row count is rendered once per batch.
  assert.ok(distinct <= batches, `${distinct} row counts rendered for ${batches} batches`);
  t.diagnostic(`50,000 rows: ${batches} batches, ${renders} renders (StrictMode doubles them), ${Math.round(50000 / distinct)} rows per re-render`);
  assert.deepEqual(problems, []);
  await page.close();
});
