// The demo page (www/) driven as a person uses it, through playwright-core: the simulated run
// form, the results table and the run's state. Shared by the browser tests (tests/demo/) and the
// demo's big-run measurement (bench/demo-big-run.mjs).
import { readFile } from "node:fs/promises";

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

/** Waits until the page reports a run state (idle, running, stopped, completed, failed). */
export function waitForState(page, state, timeout = 20000) {
  return page.waitForSelector(`body[data-run-state="${state}"]`, { timeout });
}
