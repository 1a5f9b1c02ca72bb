// Shared by the demo suites: Debian's Chromium driven by playwright-core (no browser download),
// the demo server on 127.0.0.1, and reading what a person sees on the page.
import { mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { root } from "../../scripts/exec.mjs";

export { CHROMIUM, launchBrowser } from "../../scripts/chromium.mjs";
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

/**
 * The ids of every row the results table holds, in table order, read as a person would: the
 * page's "Download rows" file (the table is windowed, so the DOM holds only the rows in view).
 */
export async function shownRowIds(page) {
  if (await page.locator("#download-rows").isDisabled()) return [];
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download-rows").click()]);
  const text = await readFile(await download.path(), "utf8");
  return text.split("\n").filter(Boolean).map((line) => String(JSON.parse(line).id));
}

/** Waits until the results table holds at least `n` rows (exactly `n` with `{ exact: true }`). */
export function untilRowsHeld(page, n, { exact = false, polling } = {}) {
  return page.waitForFunction(
    ({ n, exact }) => {
      const held = Number(document.querySelector("#results")?.getAttribute("aria-rowcount") ?? 1) - 1;
      return exact ? held === n : held >= n;
    },
    { n, exact },
    polling ? { polling } : undefined,
  );
}

/** How many rows the results table holds (its `aria-rowcount`, less the header). */
export async function heldRowCount(page) {
  return Number((await page.locator("#results").getAttribute("aria-rowcount")) ?? 1) - 1;
}

/** `["row-0", …, "row-<n-1>"]` */
export const rowIds = (n) => Array.from({ length: n }, (_, i) => `row-${i}`);

/**
 * Fills the simulated run form and starts it; resolves with the new run's jobUid.
 * @param {import("playwright-core").Page} page
 */
export async function startSimulatedRun(page, { inputs, rowsPerInput = 1, durationS, pageSize, preset = "none", intervalMs }) {
  const form = page.locator("#sim-form");
  await form.getByLabel("Inputs", { exact: true }).fill(String(inputs));
  await form.getByLabel("Rows per input", { exact: true }).fill(String(rowsPerInput));
  await form.getByLabel("Run takes (s)", { exact: true }).fill(String(durationS));
  await form.getByLabel("Page size", { exact: true }).fill(String(pageSize));
  await form.locator("select[name=preset]").selectOption(preset);
  await form.getByLabel("Poll every (ms)", { exact: true }).fill(String(intervalMs));
  await form.getByRole("button", { name: "Start simulated run" }).click();
  await page.waitForFunction(() => document.querySelector("#run-job")?.textContent !== "");
  return page.locator("#run-job").textContent();
}

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

/** Waits until the page reports a run state (idle, running, stopped, completed, failed). */
export function waitForState(page, state, timeout = 20000) {
  return page.waitForSelector(`body[data-run-state="${state}"]`, { timeout });
}
