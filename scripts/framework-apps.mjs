// Shared by the binding suites and the bench: builds a test app with Vite 7 as an app that installed the
// package would (the package linked into its node_modules, so "captaindata-poller/react" goes
// through package.json `exports`), and serves it with the simulator on one origin.
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "vite";
import { root } from "./exec.mjs";
import { startDemoServer } from "./start.mjs";

/** The framework test apps (tests/bindings/<name>): the bindings suites and the bench build them. */
const APPS = path.join(root, "tests", "bindings");

/**
 * Builds tests/bindings/<name> (or `dir`) in development mode (React's StrictMode double effects
 * and dev warnings only exist there; the bindings bench builds for production). Returns `{ dist, remove() }`.
 */
export async function buildApp(name, { dependencies, dir = path.join(APPS, name), mode = "development" }) {
  const work = mkdtempSync(path.join(tmpdir(), `captaindata-poller-${name}-`));
  cpSync(dir, work, { recursive: true });
  mkdirSync(path.join(work, "node_modules"));
  symlinkSync(root, path.join(work, "node_modules", "captaindata-poller"), "dir");
  for (const dep of dependencies) symlinkSync(path.join(root, "node_modules", dep), path.join(work, "node_modules", dep), "dir");
  const dist = path.join(work, "dist");
  await build({
    root: work,
    logLevel: "warn",
    configFile: false,
    mode,
    define: {
      "process.env.NODE_ENV": JSON.stringify(mode),
      __VUE_OPTIONS_API__: "false",
      __VUE_PROD_DEVTOOLS__: "false",
      __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: "false",
    },
    esbuild: { jsx: "automatic" },
    build: { outDir: dist, emptyOutDir: true, minify: false },
  });
  return { dist, remove: () => rmSync(work, { recursive: true, force: true }) };
}

/** The demo server (simulator at /v3) serving `dist` at /. */
export const serveApp = (dist) => startDemoServer({ port: 0, wwwDir: dist });

/**
 * Records every fetch the page makes, with its page time, before any script runs: a request
 * sent after an unmount shows here even if the simulator never answers it.
 */
export function recordFetches(page) {
  return page.addInitScript(() => {
    const sent = (window.fetchesSent = []);
    const original = window.fetch;
    window.fetch = function fetch(input, init) {
      sent.push({ url: String(input instanceof Request ? input.url : input), t: performance.now() });
      return original.call(this, input, init);
    };
  });
}

const apiFetches = (page, keep, t) =>
  page.evaluate(
    ([after, at]) => window.fetchesSent.filter((f) => new URL(f.url).pathname.startsWith("/v3/") && (f.t > at) === after),
    [keep === "after", t],
  );

/** API requests (`/v3/…`) the page sent after page time `t`. */
export const apiFetchesAfter = (page, t) => apiFetches(page, "after", t);

/** API requests the page sent up to page time `t`. */
export const apiFetchesBefore = (page, t) => apiFetches(page, "before", t);
