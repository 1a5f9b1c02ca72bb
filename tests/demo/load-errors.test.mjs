// Errors that say what to do, in a page: a .wasm answered with an HTML page (an app's fallback
// to index.html) is LOAD_FAILED naming the URL and the likely cause, not a compile error about
// a magic word; and a failure the app has no onError for is logged, one console line.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { createSim } from "../../sim/index.js";
import { startDemoServer } from "../../scripts/demo-server.mjs";
import { launchBrowser } from "./browser-fixture.mjs";

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "captaindata-poller": "/dist/browser.js" } }</script>
<script type="module">import * as pkg from "captaindata-poller"; window.__pkg = pkg;</script>`;

let demo;
let browser;
before(async () => {
  const www = mkdtempSync(path.join(tmpdir(), "load-errors-"));
  writeFileSync(path.join(www, "index.html"), PAGE);
  [demo, browser] = await Promise.all([startDemoServer({ port: 0, wwwDir: www, sim: createSim() }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await demo?.close();
});

test("a .wasm answered with text/html: LOAD_FAILED says so, and one console line without onError", async () => {
  const page = await browser.newPage();
  const logged = [];
  page.on("console", (m) => m.type() === "error" && logged.push(m.text()));
  try {
    // The shipped entry (dist/, built), as lazy-load.test.mjs serves it.
    await page.route("**/dist/*.js", (route) => {
      const file = path.join(root, "dist", path.basename(new URL(route.request().url()).pathname));
      return route.fulfill({ path: file, contentType: "text/javascript" });
    });
    // An SPA host: every unknown path, the module included, gets the app's index.html.
    await page.route("**/pkg/*.wasm", (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><p>app</p>" }));
    await page.goto(demo.url);
    await page.waitForFunction(() => window.__pkg);
    const outcome = await page.evaluate(async () => {
      const { JobPoller } = window.__pkg;
      const poller = new JobPoller({ jobUid: "job_1", baseUrl: `${location.origin}/v3`, apiKey: "k", projectId: "p" });
      try {
        await poller.start();
        return null;
      } catch (error) {
        return { code: error.code, message: error.message };
      }
    });
    assert.equal(outcome?.code, "LOAD_FAILED");
    const url = `${demo.url}pkg/captaindata_poller_poll_bg.wasm`;
    assert.ok(outcome.message.includes(`the server answered text/html for ${url}: is the file deployed at that URL?`), outcome.message);
    assert.doesNotMatch(outcome.message, /magic/);
    assert.deepEqual(logged.filter((line) => line.startsWith("captaindata-poller: LOAD_FAILED: ")).length, 1, logged.join(" / "));
  } finally {
    await page.close();
  }
});
