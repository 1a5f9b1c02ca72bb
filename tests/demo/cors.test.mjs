// In a browser, a fetch that gets no response at all is most often a CORS refusal: the poller
// ends with an error that says so and suggests a proxy, instead of a bare "network error".
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createSim } from "../../sim/index.js";
import { startSimServer } from "../../sim/server.mjs";
import { startDemoServer } from "../../scripts/start.mjs";
import { launchBrowser } from "./browser-fixture.mjs";

let demo;
let api;
let browser;
before(async () => {
  [demo, api, browser] = await Promise.all([
    startDemoServer({ port: 0, sim: createSim() }),
    // Another origin that answers like a server without CORS.
    startSimServer({ cors: false, apiKey: "sk-cors-7f3a", projectId: "p" }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await Promise.all([demo?.close(), api?.close()]);
});

test("a cross-origin API without CORS: RETRIES_EXHAUSTED whose message names CORS and a proxy", async () => {
  const { jobUid } = api.sim.createJob({ rows: 10, durationMs: 0 });
  const page = await browser.newPage();
  try {
    await page.goto(demo.url);
    await page.waitForSelector("body[data-ready=true]");
    const error = await page.evaluate(
      async ({ baseUrl, jobUid }) => {
        const { JobPoller } = await import("captaindata-poller");
        const poller = new JobPoller({
          baseUrl,
          jobUid,
          apiKey: "sk-cors-7f3a",
          projectId: "p",
          shareAcrossTabs: false,
          retry: { retries: 1, minDelayMs: 10, maxDelayMs: 20 },
        });
        try {
          await poller.start();
          return null;
        } catch (e) {
          return { code: e.code, message: e.message };
        }
      },
      { baseUrl: api.url, jobUid },
    );
    assert.equal(error?.code, "RETRIES_EXHAUSTED");
    assert.match(error.message, /CORS/);
    assert.match(error.message, /proxy/);
    assert.match(error.message, /captaindata-poller\/worker/, "the worker named by its place on npm");
    assert.ok(!error.message.includes("sk-cors-7f3a"), "no key in the message");
    const { requests } = api.sim.stats();
    assert.deepEqual([requests.run, requests.results], [0, 0], "no request got through");
  } finally {
    await page.close();
  }
});
