// Where a watch writes its rows, and how it continues what an earlier invocation wrote: a
// new document, the one the --state file describes (cut back to its last recorded batch),
// or, after --cursor, what the --out file holds.
import { parseCsvRecords, unescapedCell } from "./csv.mjs";
import { fileSink, stdoutSink } from "./output.mjs";
import { createRowFormat } from "./row-format.mjs";
import { UsageError } from "./usage-error.mjs";

/** The state file must describe this very watch, or resuming from it would mix outputs. */
export function checkState(state, { jobUid, values, format, out }) {
  const file = values.state;
  if (state.jobUid !== jobUid) throw new UsageError(`--state ${file} follows run ${state.jobUid}, not ${jobUid}: use another --state file`);
  if (state.format !== format) throw new UsageError(`--format ${format}: --state ${file} was written with --format ${state.format}`);
  if (state.out !== out) throw new UsageError(`--out: --state ${file} was written for ${state.out === null ? "stdout" : `--out ${state.out}`}`);
  if (values.cursor !== undefined) throw new UsageError(`--cursor: --state ${file} already holds where to resume; give one or the other`);
  // One CSV document, one rule for formula-like cells (older state files have no such field).
  if (format === "csv" && Boolean(state.csvRaw) !== Boolean(values["csv-raw"])) {
    throw new UsageError(`--csv-raw: --state ${file} was written ${state.csvRaw ? "with" : "without"} it; give the same flags again`);
  }
}

/**
 * Opens the output and the format that continues it: a new document, the one the state
 * describes (cut back to its last recorded batch), or, after `--cursor`, what the file holds.
 */
export async function openRows({ values, state, format: name, reporter }) {
  const cells = { csvRaw: Boolean(values["csv-raw"]) };
  const onLateField = (field, row, extraColumn) =>
    reporter.note(
      `--format csv: field ${JSON.stringify(field)} first appears in row ${row.toLocaleString("en")}, after the header was written: ${
        extraColumn ? `it is written in the ${extraColumn} column, as JSON` : "it is left out (the header being continued has no _extra_fields column; --format ndjson keeps every field)"
      }`,
    );
  if (values.out === undefined) {
    // stdout: every invocation writes a whole document of the rows it delivers. On a
    // terminal, no row can carry a control sequence to it.
    return { output: stdoutSink(), format: createRowFormat(name, { ...cells, terminal: Boolean(process.stdout.isTTY), onLateField }) };
  }
  if (state) {
    const output = await fileSink(values.out, { at: state.outBytes });
    return { output, format: createRowFormat(name, { ...cells, rowsBefore: state.rows, columns: state.columns, onLateField }) };
  }
  if (values.cursor === undefined) return { output: await fileSink(values.out, { at: null }), format: createRowFormat(name, { ...cells, onLateField }) };
  const output = await fileSink(values.out, { at: "end" });
  if (output.bytes === 0) return { output, format: createRowFormat(name, { ...cells, onLateField }) };
  if (name === "csv") {
    const read = parseCsvRecords(await output.firstLine())[0]?.fields ?? null;
    const columns = read && !cells.csvRaw ? read.map(unescapedCell) : read;
    return { output, format: createRowFormat(name, { ...cells, rowsBefore: 1, columns, onLateField }) };
  }
  if (name === "json") {
    // Continue the array: drop its closing bracket, and know whether a row precedes.
    const tail = await output.tail(64);
    const closed = /\n?\]\s*$/.exec(tail);
    if (closed) await output.cutTo(output.bytes - (tail.length - closed.index));
    const rowsBefore = (await output.tail(1)) === "[" ? 0 : 1;
    return { output, format: createRowFormat(name, { ...cells, rowsBefore, onLateField }) };
  }
  return { output, format: createRowFormat(name, { ...cells, onLateField }) };
}
