// The bundler path of the package's `exports` map: a page importing "captaindata-poller" by name,
// built by Vite 7 as an app that installed the package would be, works in Chromium.
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "vite";
import { root } from "../../scripts/exec.mjs";
import { startDemoServer } from "../../scripts/start.mjs";
import { launchBrowser, rowIds, watchConsole } from "./browser-fixture.mjs";

const APP = path.join(path.dirname(fileURLToPath(import.meta.url)), "vite-app");

let work;
let dist;
before(async () => {
  // The app lives outside the repository with the package "installed" in its node_modules
  // (a link to this checkout, as `npm install <path>` makes), so Vite resolves it by name
  // through package.json `exports`, not through a path or an alias.
  work = mkdtempSync(path.join(tmpdir(), "captaindata-poller-vite-"));
  cpSync(APP, work, { recursive: true });
  mkdirSync(path.join(work, "node_modules"));
  symlinkSync(root, path.join(work, "node_modules", "captaindata-poller"), "dir");
  dist = path.join(work, "dist");
  await build({ root: work, logLevel: "warn", configFile: false, build: { outDir: dist, emptyOutDir: true } });
});
after(() => rmSync(work, { recursive: true, force: true }));

test("Vite bundles the package (browser condition) with its wasm as an asset", () => {
  const assets = readdirSync(path.join(dist, "assets"));
  assert.ok(assets.some((f) => f.endsWith(".wasm")), `a .wasm asset is emitted: ${assets.join(", ")}`);
  assert.ok(existsSync(path.join(dist, "index.html")));
});

test("the Vite-built page polls the simulator and shows every row once", async () => {
  const demo = await startDemoServer({ port: 0, wwwDir: dist });
  const browser = await launchBrowser();
  try {
    const { jobUid } = demo.sim.createJob({ rows: 120, durationMs: 600, pageSize: 25 });
    const page = await browser.newPage();
    const problems = watchConsole(page);
    const loaded = [];
    page.on("request", (req) => loaded.push(new URL(req.url()).pathname));
    await page.goto(`${demo.url}?job=${encodeURIComponent(jobUid)}`);
    await page.waitForSelector("body[data-state=done], body[data-state=failed]", { timeout: 15000 });
    assert.equal(await page.locator("#status").textContent(), "finished: 120");
    assert.deepEqual(await page.$$eval("#rows li", (items) => items.map((li) => li.textContent)), rowIds(120));
    // The page loaded the bundle's own wasm asset, nothing from the repository's pkg/ or js/.
    assert.ok(loaded.some((p) => /^\/assets\/.+\.wasm$/.test(p)), `requests: ${loaded.join(", ")}`);
    assert.deepEqual(loaded.filter((p) => p.startsWith("/pkg/") || p.startsWith("/js/")), []);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await demo.close();
  }
});
