// The README's browser examples run in Chromium against the simulator, standing in for the
// proxy they name (https://your-proxy.example.com/v3, which adds the key as a proxy would):
// the page as written (an import map, no bundler); the React component rendered on the server
// (renderToString in Node: no window, no localStorage) then hydrated in StrictMode; the Vue and
// Svelte 5 components built by Vite, then given another run through their prop.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import { build as esbuild } from "esbuild";
import { build } from "vite";
import { root } from "../../scripts/exec.mjs";
import { startDemoServer } from "../../scripts/start.mjs";
import { makeRow } from "../../sim/rows.js";
import { settled, spyOnLoads } from "../bindings/ssr-spy.mjs";
import { launchBrowser, trackPackageTimers, untilPackageQuiet, watchConsole } from "../demo/browser-fixture.mjs";
import { PLACEHOLDER_JOB, PROXY_ORIGIN } from "./example-fixture.mjs";
import { until } from "../support/until.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), "captaindata-poller-browser-examples-"));
const link = (dir, dep) => {
  mkdirSync(path.dirname(path.join(dir, "node_modules", dep)), { recursive: true });
  symlinkSync(path.join(dep === "captaindata-poller" ? root : path.join(root, "node_modules", dep)), path.join(dir, "node_modules", dep), "dir");
};

/**
 * A Vite app of tests/examples/apps/<name> with the README's component copied in, as an app
 * that installed the package has it (node_modules/captaindata-poller: this checkout).
 */
async function buildApp(name, { example, dependencies, plugins = [] }) {
  const dir = path.join(work, name);
  cpSync(path.join(HERE, "apps", name), dir, { recursive: true });
  cpSync(path.join(root, example), path.join(dir, path.basename(example)));
  for (const dep of ["captaindata-poller", ...dependencies]) link(dir, dep);
  await build({
    root: dir,
    logLevel: "warn",
    configFile: false,
    mode: "development",
    plugins,
    define: { "process.env.NODE_ENV": JSON.stringify("development"), __VUE_OPTIONS_API__: "false", __VUE_PROD_DEVTOOLS__: "false", __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: "false" },
    esbuild: { jsx: "automatic" },
    build: { outDir: path.join(dir, "dist"), emptyOutDir: true, minify: false },
  });
  return path.join(dir, "dist");
}

/** The page example served as written, with the package under /node_modules (its import map's target). */
function pageSite() {
  const dir = path.join(work, "page");
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(root, "examples", "page", "index.html"), path.join(dir, "index.html"));
  link(dir, "captaindata-poller");
  return dir;
}

let browser;
const servers = [];
const sites = {};
before(async () => {
  const { default: vue } = await import("@vitejs/plugin-vue");
  const { svelte } = await import("@sveltejs/vite-plugin-svelte");
  sites.page = pageSite();
  sites.react = await buildApp("react", { example: "examples/react/Leads.tsx", dependencies: ["react", "react-dom", "scheduler"] });
  sites.vue = await buildApp("vue", { example: "examples/vue/Leads.vue", dependencies: ["vue", "@vue"], plugins: [vue()] });
  sites.svelte = await buildApp("svelte", { example: "examples/svelte/Leads.svelte", dependencies: ["svelte"], plugins: [svelte()] });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => s.close()));
  rmSync(work, { recursive: true, force: true });
});

/** A demo server (simulator at /v3, key `sim-key`) serving `dir` at /. */
async function serve(dir) {
  const server = await startDemoServer({ port: 0, wwwDir: dir });
  servers.push(server);
  return server;
}

/**
 * A page whose requests to the example's proxy go to the simulator with the credentials added,
 * as the proxy would; every request to the proxy is recorded with its page time.
 */
async function openPage(server, url, { html } = {}) {
  const page = await browser.newPage();
  const problems = watchConsole(page);
  const proxied = [];
  await page.addInitScript(trackPackageTimers);
  await page.route(`${PROXY_ORIGIN}/**`, async (route) => {
    const request = route.request();
    const target = request.url().replace(PROXY_ORIGIN, server.url.replace(/\/$/, ""));
    const entry = { url: request.url(), at: Date.now(), answered: false };
    proxied.push(entry);
    const response = await route.fetch({ url: target, headers: { ...request.headers(), authorization: "x-api-key sim-key", "x-project-id": "sim-project" } });
    const body = (await response.text()).replaceAll(server.url.replace(/\/$/, ""), PROXY_ORIGIN);
    await route.fulfill({ status: response.status(), headers: { ...response.headers(), "access-control-allow-origin": "*" }, body });
    entry.answered = true;
  });
  if (html !== undefined) {
    // The server-rendered page (a Next.js-like render of the component) in place of the built one.
    await page.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html", body: html }));
  }
  await page.goto(url);
  return { page, problems, proxied };
}

const names = (jobUid, n) => Array.from({ length: n }, (_, i) => makeRow(jobUid, i).full_name);
const items = (page, selector) => page.$$eval(selector, (els) => els.map((el) => el.textContent));

test("examples/page/index.html: every row listed once, then the summary", async () => {
  const server = await serve(sites.page);
  const { jobUid } = server.sim.createJob({ rows: 120, durationMs: 0, pageSize: 50 });
  const { page, problems, proxied } = await openPage(server, `${server.url}?job=${jobUid}`);
  await page.waitForFunction(() => /^finished: /.test(document.querySelector("p")?.textContent ?? ""), null, { timeout: 30000 });
  assert.equal(await page.locator("p").textContent(), "finished: 120 rows");
  const rows = (await items(page, "li")).map((t) => JSON.parse(t ?? ""));
  assert.deepEqual(rows.map((r) => r.id), Array.from({ length: 120 }, (_, i) => `row-${i}`));
  assert.ok(proxied.length > 0 && proxied.every((r) => r.url.startsWith(`${PROXY_ORIGIN}/v3/jobs/${jobUid}`)), "it polls through the proxy");
  assert.deepEqual(problems, []);
  await page.close();
});

test("examples/react/Leads.tsx: server-rendered idle without window or localStorage, hydrated with no mismatch, every row; a reload resumes from the saved cursor", async () => {
  // The server render: Node, no window, no localStorage, no fetch or wasm load.
  assert.equal(typeof globalThis.localStorage, "undefined");
  const seen = spyOnLoads();
  const ssrDir = path.join(work, "react-ssr");
  mkdirSync(ssrDir, { recursive: true });
  for (const dep of ["captaindata-poller", "react", "react-dom", "scheduler"]) link(ssrDir, dep);
  writeFileSync(path.join(ssrDir, "render.tsx"), `import { renderToString } from "react-dom/server";\nimport { Leads } from "${path.join(root, "examples", "react", "Leads.tsx")}";\nexport const render = (jobUid: string) => renderToString(<Leads jobUid={jobUid} />);\n`);
  await esbuild({ entryPoints: [path.join(ssrDir, "render.tsx")], bundle: true, format: "esm", platform: "node", jsx: "automatic", packages: "external", outfile: path.join(ssrDir, "render.mjs"), absWorkingDir: ssrDir, logLevel: "silent" });
  const { render } = await import(pathToFileURL(path.join(ssrDir, "render.mjs")).href);
  const server = await serve(sites.react);
  const { jobUid } = server.sim.createJob({ rows: 90, durationMs: 0, pageSize: 40 });
  const markup = render(jobUid);
  assert.match(markup.replaceAll("<!-- -->", ""), /^<p>idle: 0 rows<button>Stop<\/button><\/p><ul><\/ul>$/, markup);
  await settled(); // past the render's microtasks, nothing pending that could load
  assert.deepEqual(seen, [], "the server render loads nothing");

  const built = readFileSync(path.join(sites.react, "index.html"), "utf8");
  const html = built.replace("<!--ssr-->", markup);
  const url = `${server.url}?job=${jobUid}`;
  const { page, problems } = await openPage(server, url, { html });
  await page.waitForFunction(() => /^finished: /.test(document.querySelector("p")?.textContent ?? ""), null, { timeout: 30000 });
  assert.match(await page.locator("p").textContent(), /^finished: 90 rows/);
  assert.deepEqual(await items(page, "li"), names(jobUid, 90));
  assert.deepEqual(problems, [], "no hydration mismatch (React #418/#419), no error");
  const cursor = await page.evaluate((key) => localStorage.getItem(key), `cursor:${jobUid}`);
  assert.equal(typeof cursor, "string", "the cursor was saved");

  // A reload: the poller resumes from the saved cursor; the state says how many rows came before.
  await page.reload();
  await page.waitForFunction(() => /^finished: /.test(document.querySelector("p")?.textContent ?? ""), null, { timeout: 30000 });
  assert.match(await page.locator("p").textContent(), /^finished: 90 rows \(the first 90 were shown before the reload\)/);
  assert.deepEqual(await items(page, "li"), [], "no row delivered twice");
  assert.deepEqual(problems, []);
  await page.close();
});

/** A request's timeout in the examples' pollers (the default): told apart from their sleeps. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Waits until every proxied request was answered and the page's package sleeps, nothing in flight. */
async function untilAsleep(page, proxied) {
  await until(
    async () => {
      if (!proxied.every((r) => r.answered)) return false;
      const pending = await page.evaluate(() => window.__packageTimers.pending());
      // A poll's deadline (hours) may be pending too; a sleep is shorter, a request's timeout is 30 s.
      return !pending.includes(REQUEST_TIMEOUT_MS) && pending.some((ms) => ms < 3_600_000);
    },
    { everyMs: 25, what: "the first run's poller asleep between polls" },
  );
}

/** A Vite-built example given one run, then another through its prop: the first poller stops. */
async function propChange(site, { statusSelector }) {
  const server = await serve(site);
  // A long run for the first: its poller sleeps between reads until the prop changes.
  const first = server.sim.createJob({ rows: 5000, durationMs: 600_000, pageSize: 1000 }).jobUid;
  const next = server.sim.createJob({ rows: 70, durationMs: 0, pageSize: 30 }).jobUid;
  const { page, problems, proxied } = await openPage(server, `${server.url}?job=${first}&next=${next}`);
  await page.waitForFunction((s) => /^\s*polling: /.test(document.querySelector(s)?.textContent ?? ""), statusSelector, { timeout: 30000 });
  // Switch while the first poller sleeps between polls (every request answered, one package
  // timer that is not a request's timeout): a read already on its way is not one sent after.
  await untilAsleep(page, proxied);
  const switchedAt = Date.now();
  await page.click("#next");
  await page.waitForFunction((s) => /^\s*finished: 70 rows/.test(document.querySelector(s)?.textContent ?? ""), statusSelector, { timeout: 30000 });
  assert.deepEqual(await items(page, "li"), names(next, 70));
  await untilPackageQuiet(page, 20000); // no sleep left: the first run's poller stopped
  assert.deepEqual(proxied.filter((r) => r.url.includes(first) && r.at > switchedAt), [], "no request for the first run after the change");
  assert.deepEqual(problems, []);
  await page.close();
}

test("examples/vue/Leads.vue (<script setup lang=\"ts\">, built by Vite): every row, and a new jobUid restarts the poller", () =>
  propChange(sites.vue, { statusSelector: "#app > p" }));

test("examples/svelte/Leads.svelte (Svelte 5 runes, built by Vite): every row, and a new jobUid ($derived) restarts the poller", () =>
  propChange(sites.svelte, { statusSelector: "#app > p" }));

test("the examples name the placeholder run the docs show", () => {
  for (const file of ["examples/page/index.html", "examples/node/quick-start.js", "examples/cron/wrangler.toml"]) {
    assert.ok(readFileSync(path.join(root, file), "utf8").includes(PLACEHOLDER_JOB), file);
  }
});
