// The chaos campaign (scripts/chaos/campaign.js) in headless Chromium: the package's browser entry
// in a page served with the simulator on one 127.0.0.1 origin, the same checks as `npm run chaos`.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { startDemoServer } from "../../scripts/start.mjs";
import { createSim } from "../../sim/index.js";
import { launchBrowser, watchConsole } from "./browser-fixture.mjs";

const API_KEY = "sk_chaos_browser_3Hn8qW2e";
const PROJECT_ID = "chaos-project";
const RUNS = 24;

let server;
let browser;
before(async () => {
  // Seed 1, as `npm run chaos`: a failing run seed replays in Node with `npm run chaos -- --runs 1 --seed <it>`.
  const sim = createSim({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 1 });
  [server, browser] = await Promise.all([
    startDemoServer({ port: 0, sim, wwwDir: path.join(root, "scripts", "chaos"), fallback: false }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test(`${RUNS} chaos runs in Chromium: no row lost or duplicated, nothing after the end, no hang, no key leak`, { timeout: 120000 }, async () => {
  const page = await browser.newPage();
  const problems = watchConsole(page);
  const printed = [];
  page.on("console", (m) => printed.push(m.text()));
  await page.goto(server.url);
  await page.waitForSelector("body[data-ready=true]", { state: "attached" });
  const seed = Math.floor(Math.random() * 2 ** 31);
  const totals = await page.evaluate((o) => window.runChaos(o), { runs: RUNS, seed, apiKey: API_KEY, projectId: PROJECT_ID, concurrency: 4 });
  console.log(totals.line);
  const failures = totals.failures.map((f) => `seed ${f.seed}:\n  ${f.problems.join("\n  ")}`).join("\n");
  assert.ok(totals.clean, `campaign from seed ${seed} failed (outcome errors ${totals.outcomeErrors}):\n${failures}`);
  assert.equal(totals.runs, RUNS);
  assert.ok(totals.faults > 0 && totals.rows > 0, "the campaign met faults and delivered rows");
  // The browser's own console never saw the key either (errors the page printed included).
  assert.deepEqual(printed.filter((line) => line.includes(API_KEY)), []);
  assert.deepEqual(problems.filter((p) => p.includes(API_KEY)), []);
  await page.close();
});
