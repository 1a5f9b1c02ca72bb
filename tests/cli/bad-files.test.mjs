// Files a person gets wrong: --out on a directory or where no file can be written, a --state
// file that is corrupt or belongs to another output, --inputs missing, empty, not an array of
// objects, or saved by Excel (BOM, CRLF). Each exits 2 with the flag and file named, before
// any run is scheduled, and leaves every file as it was; a disk that fills up mid-run exits 1.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { createSim } from "../../sim/index.js";
import { API_KEY, PROJECT_ID, readScratch, runCli, simFlags, useCliSim } from "./cli-fixture.mjs";

// The simulator, recording the bodies of the schedule requests (it keeps only their count).
const scheduled = [];
const inner = createSim({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 19, defaults: { rows: 30, durationMs: 200 } });
const recording = Object.assign(Object.create(inner), {
  async handle(request) {
    if (request.method === "POST") scheduled.push(await request.clone().json().catch(() => null));
    return inner.handle(request);
  },
});
const ctx = useCliSim({ sim: recording });
const scratch = (name, text) => writeFileSync(path.join(ctx.dir, name), text);
const files = () => readdirSync(ctx.dir).sort();

async function refused(args, message) {
  const before = files();
  const requests = ctx.sim.stats().requests.total;
  const { code, stdout, stderr } = await runCli(ctx, args);
  assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
  assert.match(stderr, message, args.join(" "));
  assert.doesNotMatch(stderr, /\n {4}at /, "no stack trace");
  assert.equal(stdout, "");
  assert.deepEqual(files(), before, "no file created");
  assert.equal(ctx.sim.stats().requests.total, requests, "no request sent");
}

test("--out: a directory, a missing directory, a path through a file, the --state file itself", async () => {
  mkdirSync(path.join(ctx.dir, "a-dir"));
  scratch("plain.txt", "not a directory\n");
  const { jobUid } = ctx.sim.createJob({ rows: 5, durationMs: 0 });
  const watch = (...flags) => ["watch", jobUid, ...flags, ...simFlags(ctx)];
  await refused(watch("--out", "a-dir", "--state", "s.json"), /^captaindata-poller: --out a-dir: it is a directory; give the path of a file$/m);
  await refused(watch("--out", "nowhere/rows.ndjson"), /--out nowhere\/rows\.ndjson: the directory \S+nowhere does not exist/);
  await refused(watch("--out", "plain.txt/rows.ndjson"), /--out plain\.txt\/rows\.ndjson: \S+plain\.txt is not a directory/);
  await refused(watch("--out", "rows.ndjson", "--state", "./rows.ndjson"), /--out and --state both name rows\.ndjson/);
  await refused(watch("--state", "a-dir"), /--state a-dir: .*it is a directory/);
  assert.equal(readScratch(ctx, "plain.txt"), "not a directory\n");
});

test("--state: corrupt, empty, or another output's: refused, and the --out file it was next to is not touched", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 5, durationMs: 0 });
  const watch = (...flags) => ["watch", jobUid, "--out", "kept.ndjson", ...flags, ...simFlags(ctx)];
  scratch("kept.ndjson", '{"id":"mine"}\n');
  scratch("corrupt.state.json", '{"version":1,"jobUid":');
  await refused(watch("--state", "corrupt.state.json"), /--state corrupt\.state\.json: not a state file written by this command \(not JSON\); it is left as it is/);
  scratch("empty.state.json", "");
  await refused(watch("--state", "empty.state.json"), /--state empty\.state\.json: the file is empty/);
  scratch("foreign.state.json", '{"version":1,"jobUid":"x","rows":"many"}');
  await refused(watch("--state", "foreign.state.json"), /--state foreign\.state\.json: not a state file written by this command/);
  // A real state, of this run written to another file.
  assert.equal((await runCli(ctx, ["watch", jobUid, "--out", "other.ndjson", "--state", "other.state.json", ...simFlags(ctx)])).code, 0);
  await refused(watch("--state", "other.state.json"), /--out: --state other\.state\.json was written for --out \S+other\.ndjson/);
  assert.equal(readScratch(ctx, "kept.ndjson"), '{"id":"mine"}\n');
  assert.equal(readScratch(ctx, "corrupt.state.json"), '{"version":1,"jobUid":');
});

test("a --state file whose --out file was deleted: refused, nothing created", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 5, durationMs: 0 });
  const args = ["watch", jobUid, "--out", "gone.ndjson", "--state", "gone.state.json", ...simFlags(ctx)];
  assert.equal((await runCli(ctx, args)).code, 0);
  const { rmSync } = await import("node:fs");
  rmSync(path.join(ctx.dir, "gone.ndjson"));
  await refused(args, /--out gone\.ndjson does not exist, but the --state file recorded \d+ bytes in it/);
});

test("run: every bad file is refused before the run is scheduled", async () => {
  mkdirSync(path.join(ctx.dir, "out-dir"), { recursive: true });
  scratch("ok.csv", "url\nhttps://a\n");
  scratch("empty.csv", "");
  scratch("header-only.csv", "linkedin_profile_url\r\n");
  scratch("semicolons.csv", "url;name\n");
  scratch("object.json", '{"url":"https://a"}');
  scratch("numbers.json", "[1, 2]");
  scratch("empty.json", "[]");
  scratch("text.json", '"https://a"');
  scratch("steps.json", '{"steps":1}');
  const run = (...flags) => ["run", "wf-bad", ...flags, ...simFlags(ctx)];
  const before = scheduled.length;
  await refused(run("--inputs", "missing.csv"), /--inputs missing\.csv: cannot read it: no such file \(ENOENT\)/);
  await refused(run("--inputs", "empty.csv"), /--inputs empty\.csv: the file is empty/);
  await refused(run("--inputs", "header-only.csv"), /--inputs header-only\.csv: a header line and no rows: no inputs to schedule$/m);
  await refused(run("--inputs", "semicolons.csv"), /its header has semicolons: the separator must be a comma/);
  await refused(run("--inputs", "object.json"), /--inputs object\.json: expected a JSON array of inputs \(or \{ "inputs": \[\.\.\.\] \}\), got an object/);
  await refused(run("--inputs", "numbers.json"), /--inputs numbers\.json: input 1 is a number, not an object of fields/);
  await refused(run("--inputs", "empty.json"), /--inputs empty\.json: the array is empty/);
  await refused(run("--inputs", "text.json"), /--inputs text\.json: .*got a string/);
  await refused(run("--inputs", "ok.csv", "--steps", "steps.json"), /--steps steps\.json: expected a JSON array of steps, got an object/);
  await refused(run("--inputs", "ok.csv", "--out", "out-dir"), /--out out-dir: it is a directory/);
  await refused(run("--inputs", "ok.csv", "--state", "no/dir/s.json"), /--state no\/dir\/s\.json: the directory/);
  assert.equal(scheduled.length, before, "nothing scheduled");
});

test("run: a CSV saved with a BOM and CRLF line ends, and a JSON file with a BOM, schedule clean inputs", async () => {
  scratch("excel.csv", "\ufefflinkedin_profile_url,note\r\nhttps://www.linkedin.com/in/ada,first\r\nhttps://www.linkedin.com/in/bob,\"two\r\nlines\"\r\n");
  const csv = await runCli(ctx, ["run", "wf-excel", "--inputs", "excel.csv", "--quiet", ...simFlags(ctx)]);
  assert.equal(csv.code, 0, csv.stderr);
  assert.deepEqual(scheduled.at(-1).inputs, [
    { linkedin_profile_url: "https://www.linkedin.com/in/ada", note: "first" },
    { linkedin_profile_url: "https://www.linkedin.com/in/bob", note: "two\r\nlines" },
  ]);
  scratch("bom.json", '\ufeff[{"linkedin_profile_url":"https://www.linkedin.com/in/cy"}]\r\n');
  const json = await runCli(ctx, ["run", "wf-excel", "--inputs", "bom.json", "--quiet", ...simFlags(ctx)]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(scheduled.at(-1).inputs, [{ linkedin_profile_url: "https://www.linkedin.com/in/cy" }]);
});

test("a disk that fills up mid-run (--out /dev/full): exit 1, the file named, the state not ahead", { skip: !existsSync("/dev/full") && "no /dev/full" }, async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 50, durationMs: 0 });
  const { code, stderr } = await runCli(ctx, ["watch", jobUid, "--out", "/dev/full", "--state", "full.state.json", ...simFlags(ctx)]);
  assert.equal(code, 1, stderr);
  assert.match(stderr, /error: cannot write --out \/dev\/full: no space left on the device \(ENOSPC\); 0 rows written to \/dev\/full/);
  assert.doesNotMatch(stderr, /\n {4}at /);
  assert.equal(JSON.parse(readScratch(ctx, "full.state.json")).rows, 0);
});
