// A run that ended with rows known missing (the package's `"incomplete"` summary, or the
// worker's `rows_missing` in a run body): the line that names what is lacking, and exit code 6.

/** How many batch names the line shows before "and N more". */
const SHOWN = 5;

/**
 * `text` without terminal escape sequences (CSI: colours, cursor moves) nor any other control
 * character (C0, DEL, C1): a server's batch name cannot move or colour the terminal.
 */
const stripControl = (text) =>
  String(text)
    .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "")
    .replace(/[\x00-\x1f\x7f-\x9f]/g, "");

const plural = (n, word) => `${n.toLocaleString("en")} ${word}${n === 1 ? "" : "es"}`;

/**
 * "incomplete: the run ended with rows missing (ROWS_MISSING): 40 rows in 2 batches: b-3, b-4"
 * for `missing` ({ code, batches, batchCount, count }), the first 5 batches named.
 */
export function missingText({ code, batches = [], batchCount, count }, { rows, where = "" } = {}) {
  const names = batches.slice(0, SHOWN).map(stripControl);
  const total = Number.isSafeInteger(batchCount) && batchCount >= batches.length ? batchCount : batches.length;
  const more = total > names.length ? ` and ${(total - names.length).toLocaleString("en")} more` : "";
  const lacking = count === null || count === undefined ? "rows unknown in number" : `${count.toLocaleString("en")} row${count === 1 ? "" : "s"}`;
  const kept = rows === undefined ? "" : `; ${rows.toLocaleString("en")} row${rows === 1 ? "" : "s"} written${where}`;
  const named = names.length > 0 ? `: ${names.join(", ")}${more}` : "";
  return `incomplete: the run ended with rows missing (${stripControl(code)}): ${lacking} in ${plural(total, "batch")}${named}${kept}`;
}

/** The codes of a run body's `error_code` that, with its `rows_missing`, mean rows are missing. */
const MISSING_CODES = new Set(["ROWS_MISSING", "ROWS_CAP_REACHED"]);

/** `{ code, batches, batchCount, count }` of a run body that ended with rows missing, or null. */
export function missingOfRun(body) {
  const missing = body?.rows_missing;
  if (missing === null || typeof missing !== "object" || !MISSING_CODES.has(body.error_code)) return null;
  const batches = Array.isArray(missing.batches) ? missing.batches.filter((b) => typeof b === "string") : [];
  const number = (n) => (Number.isSafeInteger(n) && n >= 0 ? n : null);
  return { code: body.error_code, batches, batchCount: number(missing.batch_count) ?? batches.length, count: number(missing.count) };
}
