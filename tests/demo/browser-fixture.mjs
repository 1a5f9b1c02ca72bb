// Shared by the demo suites: Debian's Chromium driven by playwright-core (no browser download),
// the demo server on 127.0.0.1, and reading what a person sees on the page.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { root } from "../../scripts/exec.mjs";

export { CHROMIUM, launchBrowser } from "../../scripts/chromium.mjs";
// The demo page's form, table and run state, as the bench's big run reads them too.
export { heldRowCount, shownRowIds, startSimulatedRun, untilRowsHeld, waitForState } from "../../scripts/demo-page.mjs";
export const OUTPUT_DIR = path.join(root, "test-results");

/** A path under test-results/ (created). */
export function outputPath(name) {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  return path.join(OUTPUT_DIR, name);
}

/** Collects page errors and console errors so a test can assert the page stayed healthy. */
export function watchConsole(page) {
  const problems = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  return problems;
}

/** `["row-0", …, "row-<n-1>"]` */
export const rowIds = (n) => Array.from({ length: n }, (_, i) => `row-${i}`);

/**
 * For `addInitScript`: the package's pending timers in the page (tests/support/timers.mjs, the
 * tracker every suite uses). Every request it sends holds one (its timeout) and a poller between
 * polls its sleep: "nothing left that could send a request" is none pending, a condition.
 */
export { trackPackageTimers } from "../support/timers.mjs";

/** Waits until the package in `page` holds no timer: nothing left that could send a request. */
export function untilPackageQuiet(page, timeout = 10000) {
  return page.waitForFunction(() => window.__packageTimers.pending().length === 0, null, { timeout });
}
