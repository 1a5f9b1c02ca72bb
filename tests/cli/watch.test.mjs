// `watch` as a person runs it: rows on stdout exactly once and in order while the API
// misbehaves, the exit code says how the run ended, and a pipe gets no escape codes.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parseCsvObjects } from "../../bin/csv.mjs";
import { ESCAPE, cliEnv, ndjsonIds, readScratch, rowIds, runCli, simFlags, useCliSim, API_KEY } from "./cli-fixture.mjs";

const ctx = useCliSim();

/** A run shaped like Captain Data's (1000-row pages, rows in bursts) with one fault of each kind. */
const faultyRun = () =>
  ctx.sim.createJob({
    rows: 2500,
    durationMs: 2000,
    arrival: { bursts: 4 },
    faults: {
      script: [
        { kind: "results", nth: 1, respond: 503 },
        { kind: "run", nth: 2, respond: 429, retryAfter: 1 },
        { kind: "results", nth: 3, respond: "drop" },
        { kind: "results", nth: 4, respond: "malformed" },
      ],
    },
  }).jobUid;

const faultsSeen = (jobUid) => ctx.sim.stats(jobUid).log.filter((entry) => entry.fault).map((entry) => entry.fault);

test("NDJSON on stdout: every row once, in order, through a 503, a 429, a dropped connection and a truncated body", async () => {
  const jobUid = faultyRun();
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  assert.deepEqual(ndjsonIds(stdout), rowIds(2500));
  assert.deepEqual(faultsSeen(jobUid).sort(), ["429", "503", "drop", "malformed"]);
  assert.match(stderr, /done: run finished, 2,500 rows/);
  // Piped (not a TTY): plain log lines, no control sequence on either stream.
  assert.ok(!ESCAPE.test(stdout) && !ESCAPE.test(stderr), "no escape codes in piped output");
  assert.match(stderr, /^status: running/m);
});

test("CSV to --out: a header from the rows' fields, then every row once, in order, under the same faults", async () => {
  const jobUid = faultyRun();
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, "--format", "csv", "--out", "rows.csv", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  assert.equal(stdout, "", "nothing on stdout when the rows go to --out");
  const text = readScratch(ctx, "rows.csv");
  assert.equal(text.split("\n")[0], "id,index,full_name,job_title,company_name,linkedin_profile_url,location,summary,_extra_fields");
  const rows = parseCsvObjects(text);
  assert.deepEqual(rows.map((r) => r.id), rowIds(2500));
  assert.ok(rows.some((r) => r.location.includes(",")), "fields holding commas survive (quoted)");
  assert.equal(faultsSeen(jobUid).length, 4);
});

test("CSV: a field that first appears after the header goes to _extra_fields as JSON, named once on stderr; no value lost", async () => {
  // From the second results page on, the server adds a field the first page did not have.
  const { jobUid } = ctx.sim.createJob({ rows: 2500, durationMs: 600, arrival: { bursts: 3 }, hostile: "huge", hostileFrom: 1, hostileBytes: 1000 });
  const { code, stderr } = await runCli(ctx, ["watch", jobUid, "--format", "csv", "--out", "late.csv", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  const rows = parseCsvObjects(readScratch(ctx, "late.csv"));
  assert.deepEqual(rows.map((r) => r.id), rowIds(2500));
  assert.deepEqual(Object.keys(rows[0]).at(-1), "_extra_fields");
  assert.equal(rows[999]._extra_fields, "", "the first page's rows have no extra field");
  for (const row of [rows[1000], rows[2499]]) assert.deepEqual(Object.keys(JSON.parse(row._extra_fields)), ["padding"]);
  assert.match(JSON.parse(rows[2499]._extra_fields).padding, /^x+$/);
  assert.equal(stderr.match(/field "padding" first appears in row 1,001, after the header was written: it is written in the _extra_fields column, as JSON/g)?.length, 1);
});

test("--format json: one array holding every row", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1200, durationMs: 500 });
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, "--format", "json", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout).map((r) => r.id), rowIds(1200));
});

test("a failed run exits 1 and says so; the rows delivered before the failure are kept", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 300, durationMs: 600, outcome: "shutdown" });
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, ...simFlags(ctx)]);
  assert.equal(code, 1, stderr);
  assert.match(stderr, /JOB_FAILED/);
  assert.equal(new Set(ndjsonIds(stdout)).size, ndjsonIds(stdout).length, "no row twice");
});

test("All Inputs Failed exits 1", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10, durationMs: 100, outcome: "allInputsFailed" });
  const { code, stderr } = await runCli(ctx, ["watch", jobUid, ...simFlags(ctx)]);
  assert.equal(code, 1, stderr);
  assert.match(stderr, /ALL_INPUTS_FAILED/);
});

test("a run that ends as warning exits 0 with a note", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 20, durationMs: 100, outcome: "warning" });
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, "--quiet", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  assert.deepEqual(ndjsonIds(stdout), rowIds(20));
  assert.match(stderr, /warning: some inputs failed/);
});

test("an unknown run exits 3, and so does a refused key (read from --api-key-file)", async () => {
  const unknown = await runCli(ctx, ["watch", "no-such-run", ...simFlags(ctx)]);
  assert.equal(unknown.code, 3, unknown.stderr);
  assert.match(unknown.stderr, /NOT_FOUND/);

  const { jobUid } = ctx.sim.createJob({ rows: 10, durationMs: 0 });
  writeFileSync(path.join(ctx.dir, "wrong.key"), "sk_wrong_key_but_secret_too\n");
  const refused = await runCli(ctx, ["watch", jobUid, "--api-key-file", "wrong.key", ...simFlags(ctx)], { env: cliEnv({ CAPTAINDATA_API_KEY: "" }) });
  assert.equal(refused.code, 3, refused.stderr);
  assert.match(refused.stderr, /UNAUTHORIZED/);
  assert.ok(!refused.stderr.includes("sk_wrong_key_but_secret_too"), "the key from the file is not printed");
});

test("giving up (--timeout) exits 4", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 100, durationMs: 60_000 });
  const { code, stderr } = await runCli(ctx, ["watch", jobUid, "--timeout", "1s", ...simFlags(ctx)]);
  assert.equal(code, 4, stderr);
  assert.match(stderr, /TIMEOUT/);
});

// Every other test's stdout, stderr and files are audited for the key too, after the last test (useCliSim).
test("the key is sent only as a header: the simulator accepted it, and no output or file holds it", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 5, durationMs: 0 });
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, "--state", "key-audit.state.json", "--out", "key-audit.ndjson", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  for (const text of [stdout, stderr, readScratch(ctx, "key-audit.state.json"), readScratch(ctx, "key-audit.ndjson")]) {
    assert.ok(!text.includes(API_KEY));
  }
  assert.ok(readScratch(ctx, "key-audit.state.json").includes(jobUid));
});
