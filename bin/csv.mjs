// RFC 4180 CSV both ways: reading a workflow's `--inputs` file, writing `--format csv` rows.
// Small enough to own: a CSV dependency would land in every install of the package (pages and
// workers too) for the sake of one CLI flag.

/** A malformed CSV file: `line` is the 1-based line where the problem starts. */
export class CsvError extends Error {
  constructor(message, line) {
    super(`line ${line}: ${message}`);
    this.name = "CsvError";
    this.line = line;
  }
}

/**
 * Splits CSV text into records: `{ fields, line }[]`. Quoted fields may hold commas, quotes
 * (doubled) and line breaks; CRLF and LF both end a record; a leading BOM is dropped; blank
 * lines are skipped. A quote inside an unquoted field is kept as a character.
 */
export function parseCsvRecords(text) {
  const records = [];
  let fields = [];
  let field = "";
  let quoted = false;
  let atFieldStart = true;
  let line = 1;
  let recordLine = 1;
  const endField = () => {
    fields.push(field);
    field = "";
    atFieldStart = true;
  };
  const endRecord = () => {
    endField();
    if (!(fields.length === 1 && fields[0] === "")) records.push({ fields, line: recordLine });
    fields = [];
  };
  for (let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c !== '"') {
        if (c === "\n") line += 1;
        field += c;
      } else if (text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else {
        quoted = false;
        const after = text[i + 1];
        if (after !== undefined && after !== "," && after !== "\n" && after !== "\r") {
          throw new CsvError(`unexpected ${JSON.stringify(after)} after a closing quote`, line);
        }
      }
    } else if (c === '"' && atFieldStart) {
      quoted = true;
      atFieldStart = false;
    } else if (c === ",") {
      endField();
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      endRecord();
      line += 1;
      recordLine = line;
    } else {
      field += c;
      atFieldStart = false;
    }
  }
  if (quoted) throw new CsvError("a quoted field is not closed", recordLine);
  if (field !== "" || fields.length > 0) endRecord();
  return records;
}

/**
 * CSV text with a header line → one object per record, keyed by the header's names (values
 * stay strings). Every record must have as many fields as the header.
 */
export function parseCsvObjects(text) {
  const [header, ...records] = parseCsvRecords(text);
  if (!header) return [];
  const names = header.fields.map((name) => name.trim());
  const empty = names.findIndex((name) => name === "");
  if (empty !== -1) throw new CsvError(`column ${empty + 1} of the header has no name`, header.line);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) throw new CsvError(`the header names ${JSON.stringify(twice)} twice`, header.line);
  return records.map(({ fields, line }) => {
    if (fields.length !== names.length) {
      throw new CsvError(`${fields.length} fields, the header has ${names.length}`, line);
    }
    return Object.fromEntries(names.map((name, i) => [name, fields[i]]));
  });
}

/**
 * A cell that a spreadsheet would run as a formula starts with one of these (OWASP, "CSV
 * Injection"): `=HYPERLINK(…)`, `+cmd|' /C calc'!A0`, `@SUM(A1)`, `-1+1`, a tab, a carriage return.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Control characters a terminal acts on (C0 but tab and line feed, DEL, C1): moving the cursor, recolouring, retitling. */
const TERMINAL_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * One CSV cell: strings as they are, objects and arrays as JSON, null/undefined empty; quoted
 * when needed. Unless `raw`, a text that would start a formula gets a leading `'` (a spreadsheet
 * shows the text; a JSON number, such as -5, stays a number). `terminal`: the control
 * characters are removed first (the cell is about to be shown, not stored).
 * @param {unknown} value
 * @param {{ raw?: boolean, terminal?: boolean }} [options]
 */
export function csvField(value, { raw = false, terminal = false } = {}) {
  let text =
    value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value);
  if (terminal) text = text.replace(TERMINAL_CONTROLS, "");
  if (!raw && typeof value !== "number" && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A header name read back from a file this writer wrote: the `'` it added taken off again. */
export const unescapedCell = (text) => (text.startsWith("'") && FORMULA_START.test(text.slice(1)) ? text.slice(1) : text);

/** One CSV line (CRLF-free: `\n` ends it) of `values`; `options` as for csvField. */
export const csvLine = (values, options) => `${values.map((value) => csvField(value, options)).join(",")}\n`;
