// How rows become text in each `--format`. A format is resumable: given what an earlier
// invocation already wrote (rows count, CSV columns), it continues the same document.
import { csvLine } from "./csv.mjs";

export const FORMATS = Object.freeze(["ndjson", "csv", "json"]);

/**
 * @param {"ndjson" | "csv" | "json"} name
 * @param {{ rowsBefore?: number, columns?: string[] | null,
 *   onLateField?: (field: string, rowNumber: number, extraColumn: string | null) => void,
 *   csvRaw?: boolean, terminal?: boolean }} [resume]
 *   `rowsBefore`: rows already in the document; `columns`: the CSV header already written;
 *   `onLateField(field, rowNumber, extraColumn)`: a CSV field first seen after the header
 *   was written (in `extraColumn`, or left out when it is null); `csvRaw`: CSV cells that
 *   start like a formula are written as they are (no leading `'`); `terminal`: the rows are
 *   shown on a terminal, so no control character reaches it.
 * @returns {{ start(): string, rows(rows: any[]): string, end(): string, columns: string[] | null }}
 */
export function createRowFormat(name, { rowsBefore = 0, columns = null, onLateField = () => {}, csvRaw = false, terminal = false } = {}) {
  let written = rowsBefore;
  const json = terminal ? terminalJson : JSON.stringify;
  if (name === "ndjson") {
    return {
      columns: null,
      start: () => "",
      rows: (rows) => rows.map((row) => `${json(row)}\n`).join(""),
      end: () => "",
    };
  }
  if (name === "json") {
    // One array: "[", then ",\n"-separated rows as they come, "]" at the end. A resumed
    // document continues after its last row (the closing bracket is not part of it).
    return {
      columns: null,
      start: () => (written === 0 ? "[" : ""),
      rows(rows) {
        const text = rows.map((row, i) => `${written + i === 0 ? "" : ","}\n${json(row)}`).join("");
        written += rows.length;
        return text;
      },
      end: () => "\n]\n",
    };
  }
  if (name === "csv") return csvFormat(columns, written, onLateField, { raw: csvRaw, terminal });
  throw new TypeError(`unknown format ${JSON.stringify(name)}`);
}

/**
 * JSON for a terminal: JSON.stringify escapes C0 controls but writes DEL and the C1 controls
 * (U+0080–U+009F: `\x9b` is a CSI to many terminals) as they are. Escaped here: the same value.
 */
const terminalJson = (row) =>
  JSON.stringify(row).replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** The last CSV column: the fields of a row that the header has no column for, as JSON. */
export const EXTRA_COLUMN = "_extra_fields";
const isExtraColumn = (name) => /^_+extra_fields$/.test(name ?? "");

/**
 * CSV: the header is the fields of the first batch's rows, in order of first appearance, and
 * a last column, `_extra_fields`. A stream cannot take a column back, so a field that first
 * appears in a later batch goes into that column (a JSON object of such fields; empty when a
 * row has none) and is named once through `onLateField`: nothing is lost. A header resumed
 * without that column (a file written by another tool) leaves late fields out.
 */
function csvFormat(columns, rowsBefore, onLateField, cellOptions) {
  let header = columns;
  let fields = columns && isExtraColumn(columns.at(-1)) ? columns.slice(0, -1) : columns;
  let rowNumber = rowsBefore;
  let known = new Set(fields ?? []);
  const late = new Set();
  const cells = (row) => {
    const values = fields.map((field) => row?.[field]);
    if (header.length === fields.length) return values;
    const extra = Object.entries(row ?? {}).filter(([field]) => !known.has(field));
    return [...values, extra.length === 0 ? null : Object.fromEntries(extra)];
  };
  return {
    get columns() {
      return header;
    },
    start: () => "",
    rows(rows) {
      if (rows.length === 0) return "";
      let text = "";
      if (header === null) {
        fields = [...new Set(rows.flatMap((row) => Object.keys(row ?? {})))];
        known = new Set(fields);
        let extra = EXTRA_COLUMN;
        while (known.has(extra)) extra = `_${extra}`;
        header = [...fields, extra];
        text += csvLine(header, cellOptions);
      }
      for (const row of rows) {
        rowNumber += 1;
        for (const field of Object.keys(row ?? {})) {
          if (known.has(field) || late.has(field)) continue;
          late.add(field);
          onLateField(field, rowNumber, header.length > fields.length ? header.at(-1) : null);
        }
        text += csvLine(cells(row), cellOptions);
      }
      return text;
    },
    end: () => "",
  };
}
