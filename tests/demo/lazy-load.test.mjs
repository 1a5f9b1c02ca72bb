// The browser entry as shipped (dist/browser.js, no bundler): importing it loads nothing, so a
// page renders and runs its code while the .wasm is late or missing; the module loads on the
// first start(), and a .wasm that cannot be loaded is LOAD_FAILED, not a blank page.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { createSim } from "../../sim/index.js";
import { startDemoServer } from "../../scripts/start.mjs";
import { until } from "../support/until.mjs";
import { launchBrowser, watchConsole } from "./browser-fixture.mjs";

const API_KEY = "sk-lazy-load-test";
// The module a page loads to poll (pollStep and scheduleWorkflow load the whole one).
const WASM = "**/pkg/captaindata_poller_poll_bg.wasm";

// An app that renders at once and keeps the package's exports for the test to drive.
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "captaindata-poller": "/dist/browser.js" } }</script>
<script type="module">
  import * as pkg from "captaindata-poller";
  window.__pkg = pkg;
  const app = document.createElement("p");
  app.id = "app";
  app.textContent = "rendered";
  document.body.append(app);
</script>
</head><body></body></html>`;

let demo;
let browser;
before(async () => {
  const www = mkdtempSync(path.join(tmpdir(), "lazy-load-"));
  writeFileSync(path.join(www, "index.html"), PAGE);
  [demo, browser] = await Promise.all([
    startDemoServer({ port: 0, wwwDir: www, sim: createSim({ apiKey: API_KEY }) }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

/** A page of the app; `/dist/` is served from the built package, the .wasm as `onWasm` says. */
async function openApp(onWasm) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const problems = watchConsole(page);
  const wasmRequests = [];
  await page.route("**/dist/*.js", (route) => {
    const file = path.join(root, "dist", path.basename(new URL(route.request().url()).pathname));
    return route.fulfill({ path: file, contentType: "text/javascript" });
  });
  await page.route(WASM, (route) => {
    wasmRequests.push(route.request().url());
    return onWasm(route);
  });
  await page.goto(demo.url);
  return { context, page, problems, wasmRequests };
}

/** Starts a poller in the page on a new simulated run; its outcome lands in `window.__outcome`. */
async function startPoller(page, jobUid) {
  await page.evaluate(
    ({ jobUid, apiKey }) => {
      const { JobPoller } = window.__pkg;
      const rows = (window.__rows = []);
      window.__errors = [];
      const poller = new JobPoller({
        jobUid,
        apiKey,
        projectId: "sim-project",
        baseUrl: `${location.origin}/v3`,
        intervalMs: 50,
        onBatch: (batch) => void rows.push(...batch.results.map((r) => r.id)),
        onError: (error) => window.__errors.push(error.code),
      });
      window.__poller = poller;
      poller.start().then(
        (summary) => (window.__outcome = { status: summary.status, totalResults: summary.totalResults }),
        (error) => {
          const { CaptainDataError, isFinalError } = window.__pkg;
          window.__outcome = {
            code: error.code,
            message: error.message,
            isClass: error instanceof CaptainDataError,
            final: isFinalError(error),
            cause: String(error.cause),
          };
        },
      );
    },
    { jobUid, apiKey: API_KEY },
  );
}

const outcomeOf = (page) => page.waitForFunction(() => window.__outcome).then((h) => h.jsonValue());

test("a late .wasm: the app renders and runs before it arrives, then the poller gets every row", async () => {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const { context, page, problems, wasmRequests } = await openApp(async (route) => {
    await held;
    await route.continue();
  });
  await page.waitForSelector("#app");
  assert.equal(await page.locator("#app").textContent(), "rendered");
  assert.deepEqual(wasmRequests, [], "importing the package fetches no .wasm");

  const { jobUid } = demo.sim.createJob({ rows: 120, durationMs: 300, pageSize: 50 });
  // start() returned (startPoller's evaluate did) while the .wasm is held: it does not block the page.
  await startPoller(page, jobUid);
  await until(() => wasmRequests.length > 0, { everyMs: 10, what: "the .wasm requested by start()" });
  assert.equal(await page.evaluate(() => window.__poller.role), "follower", "constructed before the module");
  assert.equal(demo.sim.stats(jobUid).log.length, 0, "no API request before the module arrived");
  assert.equal(await page.evaluate(() => window.__outcome ?? null), null);

  release();
  assert.deepEqual(await outcomeOf(page), { status: "finished", totalResults: 120 });
  const rows = await page.evaluate(() => window.__rows);
  assert.deepEqual(rows, Array.from({ length: 120 }, (_, i) => `row-${i}`));
  assert.equal(wasmRequests.length, 1, "fetched once");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a .wasm answering 404: the app renders, start() rejects LOAD_FAILED naming the URL; a later start may succeed", async () => {
  let missing = true;
  const { context, page, problems, wasmRequests } = await openApp((route) =>
    missing ? route.fulfill({ status: 404, body: "Not found" }) : route.continue(),
  );
  await page.waitForSelector("#app");
  const { jobUid } = demo.sim.createJob({ rows: 30, durationMs: 0, pageSize: 50 });
  await startPoller(page, jobUid);
  const outcome = await outcomeOf(page);
  assert.equal(outcome.code, "LOAD_FAILED");
  assert.ok(outcome.isClass, "a CaptainDataError instance");
  assert.equal(outcome.final, false, "not a final error of the run");
  assert.match(outcome.message, /\/pkg\/captaindata_poller_poll_bg\.wasm/);
  assert.match(outcome.message, /HTTP 404/);
  assert.deepEqual(await page.evaluate(() => window.__errors), ["LOAD_FAILED"], "onError got it once");
  assert.equal(demo.sim.stats(jobUid).log.length, 0);
  assert.equal(await page.locator("#app").textContent(), "rendered", "the page keeps working");
  // The browser logs the failed resource itself; nothing else went wrong (no uncaught error).
  assert.deepEqual(problems.filter((p) => !/Failed to load resource/.test(p)), []);

  missing = false;
  await page.evaluate(() => (window.__outcome = undefined));
  await startPoller(page, jobUid);
  assert.deepEqual(await outcomeOf(page), { status: "finished", totalResults: 30 });
  assert.equal(wasmRequests.length, 2, "the failed load is not kept: the next start fetched again");
  await context.close();
});

test("preload() starts the load early; a stopped poller never loads anything it does not need", async () => {
  const { context, page, wasmRequests } = await openApp((route) => route.continue());
  await page.waitForSelector("#app");
  const stopped = await page.evaluate(async () => {
    const { JobPoller } = window.__pkg;
    const poller = new JobPoller({ jobUid: "job-1", baseUrl: `${location.origin}/v3` });
    poller.stop();
    const summary = await poller.start();
    return { status: summary.status, requests: summary.requests };
  });
  assert.deepEqual(stopped, { status: "stopped", requests: 0 });
  assert.deepEqual(wasmRequests, []);
  await page.evaluate(() => window.__pkg.preload());
  assert.equal(wasmRequests.length, 1);
  await context.close();
});

test("pollStep and scheduleWorkflow load the whole module when first called, once; a JobPoller then runs on it", async () => {
  const { context, page, problems, wasmRequests } = await openApp((route) => route.continue());
  const fetched = [];
  page.on("request", (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith("/pkg/")) fetched.push(pathname);
  });
  await page.waitForSelector("#app");
  assert.deepEqual(fetched, [], "importing the package fetches nothing from pkg/");

  const connection = { apiKey: API_KEY, projectId: "sim-project" };
  const { jobUid } = await page.evaluate(
    ({ connection }) =>
      window.__pkg.scheduleWorkflow({ ...connection, baseUrl: `${location.origin}/v3` }, "wf-lazy", {
        job_name: "lazy",
        steps: [],
        inputs: [{ linkedin_profile_url: "https://www.linkedin.com/in/x" }],
      }),
    { connection },
  );
  assert.match(jobUid, /\S/, "the API's job_uid");
  assert.deepEqual(fetched, ["/pkg/captaindata_poller.js", "/pkg/captaindata_poller_bg.wasm"]);

  demo.sim.finish(jobUid);
  const rows = demo.sim.job(jobUid).rowsAvailable;
  const step = await page.evaluate(
    ({ connection, jobUid }) =>
      window.__pkg
        .pollStep({ ...connection, baseUrl: `${location.origin}/v3`, jobUid, maxRequests: 20 })
        .then((s) => ({ done: s.done, status: s.status, ids: s.results.map((r) => r.id), error: s.error?.code })),
    { connection, jobUid },
  );
  assert.deepEqual(step, { done: true, status: "finished", ids: Array.from({ length: rows }, (_, i) => `row-${i}`), error: undefined });

  // A run polled after them: the module in hand serves it; the smaller one is not fetched.
  const second = demo.sim.createJob({ rows: 30, durationMs: 0, pageSize: 50 });
  await startPoller(page, second.jobUid);
  assert.deepEqual(await outcomeOf(page), { status: "finished", totalResults: 30 });
  assert.deepEqual(fetched, ["/pkg/captaindata_poller.js", "/pkg/captaindata_poller_bg.wasm"], "each fetched once, nothing else");
  assert.deepEqual(wasmRequests, []);
  assert.deepEqual(problems, []);
  await context.close();
});
