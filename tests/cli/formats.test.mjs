// The CLI's text formats on their own (fast, no process): the CSV reader of `--inputs`, the
// CSV writer and its rule for fields that appear late, and a JSON array continued on resume.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CsvError, csvField, parseCsvObjects, parseCsvRecords } from "../../bin/csv.mjs";
import { createRowFormat } from "../../bin/row-format.mjs";

test("CSV reader: quotes, doubled quotes, commas and line breaks in fields, CRLF, BOM, blank lines", () => {
  const text = '\ufeffname,note\r\n"Ada, L.","said ""hi""\nthen left"\r\n\r\nBob,\n';
  assert.deepEqual(parseCsvObjects(text), [
    { name: "Ada, L.", note: 'said "hi"\nthen left' },
    { name: "Bob", note: "" },
  ]);
  assert.deepEqual(parseCsvRecords("a,b").map((r) => r.fields), [["a", "b"]], "no final line break");
  assert.deepEqual(parseCsvRecords('x"y,z\n').map((r) => r.fields), [['x"y', "z"]], "a quote inside an unquoted field is a character");
});

test("CSV reader: errors name the line", () => {
  assert.throws(() => parseCsvObjects('a,b\n1,"open\n2,3\n'), (e) => e instanceof CsvError && e.line === 2 && /not closed/.test(e.message));
  assert.throws(() => parseCsvObjects('a\n"x"y\n'), /line 2: unexpected "y" after a closing quote/);
  assert.throws(() => parseCsvObjects("a,b\n1\n"), /line 2: 1 fields, the header has 2/);
  assert.throws(() => parseCsvObjects("a,,c\n"), /line 1: column 2 of the header has no name/);
  assert.throws(() => parseCsvObjects("a,a\n"), /names "a" twice/);
});

test("CSV writer: fields round-trip through the reader; objects as JSON; null empty", () => {
  const values = ["plain", "with, comma", 'with "quotes"', "two\nlines", " padded ", 42, true, null, { a: [1, 2] }];
  const line = values.map(csvField).join(",");
  assert.deepEqual(parseCsvRecords(line)[0].fields, ["plain", "with, comma", 'with "quotes"', "two\nlines", " padded ", "42", "true", "", '{"a":[1,2]}']);
});

test("--format csv: the header comes from the first batch; a field first seen later goes to _extra_fields as JSON, named once", () => {
  const late = [];
  const format = createRowFormat("csv", { onLateField: (field, row, column) => late.push([field, row, column]) });
  assert.equal(format.rows([{ id: 1, a: "x" }, { id: 2, b: "y" }]), "id,a,b,_extra_fields\n1,x,,\n2,,y,\n");
  assert.equal(format.rows([{ id: 3, c: "new" }, { id: 4, c: "again", d: [1] }]), '3,,,"{""c"":""new""}"\n4,,,"{""c"":""again"",""d"":[1]}"\n');
  assert.deepEqual(late, [["c", 3, "_extra_fields"], ["d", 4, "_extra_fields"]]);
  assert.deepEqual(format.columns, ["id", "a", "b", "_extra_fields"]);
  // Resumed with the header the state recorded: no second header, late fields still kept.
  assert.equal(createRowFormat("csv", { columns: format.columns, rowsBefore: 4 }).rows([{ id: 5, e: 1 }]), '5,,,"{""e"":1}"\n');
  // A header without the column (continued from a file another tool wrote): late fields left out, named.
  const named = [];
  assert.equal(createRowFormat("csv", { columns: ["id"], onLateField: (...a) => named.push(a) }).rows([{ id: 6, f: 1 }]), "6\n");
  assert.deepEqual(named, [["f", 1, null]]);
  // A row field named like the column does not collide with it.
  assert.equal(createRowFormat("csv").rows([{ _extra_fields: 1 }]), "_extra_fields,__extra_fields\n1,\n");
});

test("--format json: one array; a resumed document continues after its last row", () => {
  const first = createRowFormat("json");
  const head = first.start() + first.rows([{ n: 1 }, { n: 2 }]);
  const resumed = createRowFormat("json", { rowsBefore: 2 });
  const text = head + resumed.start() + resumed.rows([{ n: 3 }]) + resumed.end();
  assert.deepEqual(JSON.parse(text), [{ n: 1 }, { n: 2 }, { n: 3 }]);
  const empty = createRowFormat("json");
  assert.deepEqual(JSON.parse(empty.start() + empty.end()), []);
});
