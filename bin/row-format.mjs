// How rows become text in each `--format`. A format is resumable: given what an earlier
// invocation already wrote (rows count, CSV columns), it continues the same document.
import { csvLine } from "./csv.mjs";

export const FORMATS = Object.freeze(["ndjson", "csv", "json"]);

/**
 * @param {"ndjson" | "csv" | "json"} name
 * @param {{ rowsBefore?: number, columns?: string[] | null,
 *   onLateField?: (field: string, rowNumber: number) => void }} [resume]
 *   `rowsBefore`: rows already in the document; `columns`: the CSV header already written;
 *   `onLateField`: a CSV field first seen after the header was written (it is left out).
 * @returns {{ start(): string, rows(rows: any[]): string, end(): string, columns: string[] | null }}
 */
export function createRowFormat(name, { rowsBefore = 0, columns = null, onLateField = () => {} } = {}) {
  let written = rowsBefore;
  if (name === "ndjson") {
    return {
      columns: null,
      start: () => "",
      rows: (rows) => rows.map((row) => `${JSON.stringify(row)}\n`).join(""),
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
        const text = rows.map((row, i) => `${written + i === 0 ? "" : ","}\n${JSON.stringify(row)}`).join("");
        written += rows.length;
        return text;
      },
      end: () => "\n]\n",
    };
  }
  if (name === "csv") return csvFormat(columns, written, onLateField);
  throw new TypeError(`unknown format ${JSON.stringify(name)}`);
}

/**
 * CSV: the header is the fields of the first batch's rows, in order of first appearance. A
 * stream cannot take a column back, so a field that first appears in a later batch is left
 * out of the CSV and reported once through `onLateField` (NDJSON keeps every field).
 */
function csvFormat(columns, rowsBefore, onLateField) {
  let header = columns;
  let rowNumber = rowsBefore;
  const late = new Set();
  const format = {
    get columns() {
      return header;
    },
    start: () => "",
    rows(rows) {
      if (rows.length === 0) return "";
      let text = "";
      if (header === null) {
        header = [...new Set(rows.flatMap((row) => Object.keys(row ?? {})))];
        text += csvLine(header);
      }
      const known = new Set(header);
      for (const row of rows) {
        rowNumber += 1;
        for (const field of Object.keys(row ?? {})) {
          if (known.has(field) || late.has(field)) continue;
          late.add(field);
          onLateField(field, rowNumber);
        }
        text += csvLine(header.map((field) => row?.[field]));
      }
      return text;
    },
    end: () => "",
  };
  return format;
}
