// Ctrl-C in the middle of a run, and a crash: the printed command (or the same command again)
// continues with the remaining rows, and the --out file ends with every row exactly once.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { cliEnv, ndjsonIds, readScratch, rowIds, spawnCli, simFlags, useCliSim, waitFor } from "./cli-fixture.mjs";

const ctx = useCliSim();

/** Rows in bursts over a few seconds: long enough to interrupt after the first rows. */
const slowRun = (rows = 3000) => ctx.sim.createJob({ rows, durationMs: 5000, arrival: { bursts: 6 }, faults: { rate5xx: 0.1 } }).jobUid;

/** Runs a printed shell command in the scratch directory, as the person would paste it. */
function runPasted(command) {
  const child = spawn("bash", ["-c", command], { cwd: ctx.dir, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  return new Promise((resolve) => child.on("close", (code) => {
    ctx.texts.push({ where: "pasted command", text: stdout + stderr });
    resolve({ code, stdout, stderr });
  }));
}

const resumeLine = (stderr) => /To resume:\n {2}(.+)\n/.exec(stderr)?.[1];

test("Ctrl-C mid-run exits 130 and prints the resume command; running it delivers the rest, none twice", async () => {
  const jobUid = slowRun();
  const args = ["watch", jobUid, "--out", "rows.ndjson", "--state", "rows.state.json", ...simFlags(ctx)];
  const first = spawnCli(ctx, args);
  await waitFor(() => readScratch(ctx, "rows.ndjson").includes('"row-0"'), "a first row in rows.ndjson");
  first.child.kill("SIGINT");
  const { code } = await first.exit;
  assert.equal(code, 130, first.stderr);
  assert.equal(ctx.sim.job(jobUid).status, "running", "interrupted mid-run");
  const written = ndjsonIds(readScratch(ctx, "rows.ndjson"));
  assert.ok(written.length > 0 && written.length < 3000, `rows before Ctrl-C: ${written.length}`);
  assert.deepEqual(written, rowIds(written.length), "the batch being written was finished");
  const state = JSON.parse(readScratch(ctx, "rows.state.json"));
  assert.equal(state.rows, written.length, "the state matches the rows on disk");

  const command = resumeLine(first.stderr);
  assert.ok(command, `a resume command in: ${first.stderr}`);
  assert.match(command, new RegExp(`watch ${jobUid} .*--out rows.ndjson --state rows.state.json`));
  const second = await runPasted(command);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "rows.ndjson")), rowIds(3000), "every row once, in order");
});

test("Ctrl-C without --state: the printed command resumes from a cursor; the two stdouts hold every row once", async () => {
  const jobUid = slowRun(2500);
  const first = spawnCli(ctx, ["watch", jobUid, ...simFlags(ctx)]);
  await waitFor(() => first.stdout.includes('"row-0"'), "a first row on stdout");
  first.child.kill("SIGINT");
  assert.equal((await first.exit).code, 130, first.stderr);
  const command = resumeLine(first.stderr);
  assert.match(command ?? "", /--cursor /);
  const second = await runPasted(command);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual([...ndjsonIds(first.stdout), ...ndjsonIds(second.stdout)], rowIds(2500));
});

test("Ctrl-C with --format json --out and no --state: the file is a closed array, and the printed --cursor command continues it", async () => {
  const jobUid = slowRun(2500);
  const first = spawnCli(ctx, ["watch", jobUid, "--format", "json", "--out", "rows.json", ...simFlags(ctx)]);
  await waitFor(() => readScratch(ctx, "rows.json").includes('"row-0"'), "a first row in rows.json");
  first.child.kill("SIGINT");
  assert.equal((await first.exit).code, 130, first.stderr);
  const partial = JSON.parse(readScratch(ctx, "rows.json")).map((r) => r.id);
  assert.deepEqual(partial, rowIds(partial.length), "valid JSON after Ctrl-C");
  const second = await runPasted(resumeLine(first.stderr));
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(JSON.parse(readScratch(ctx, "rows.json")).map((r) => r.id), rowIds(2500), "one array, every row once");
});

test("a crash (SIGKILL) mid-run never leaves the state ahead: the same command again ends with every row once", async () => {
  const jobUid = slowRun();
  const args = ["watch", jobUid, "--format", "csv", "--out", "crash.csv", "--state", "crash.state.json", ...simFlags(ctx)];
  const first = spawnCli(ctx, args);
  await waitFor(() => readScratch(ctx, "crash.csv").includes("row-0,"), "a first row in crash.csv");
  first.child.kill("SIGKILL");
  await first.exit;
  // What a crash in the middle of a write leaves behind: a torn row after the last whole batch.
  appendFileSync(path.join(ctx.dir, "crash.csv"), "row-torn,0,Half a");
  const again = spawnCli(ctx, args);
  assert.equal((await again.exit).code, 0, again.stderr);
  const lines = readScratch(ctx, "crash.csv").trimEnd().split("\n");
  assert.equal(lines.filter((l) => l.startsWith("id,")).length, 1, "one header");
  assert.deepEqual(lines.slice(1).map((l) => l.split(",")[0]), rowIds(3000));
});

test("a second Ctrl-C exits at once, even while the batch being written is stuck", { timeout: 30_000 }, async () => {
  // stdout stops being read after its first chunk: the first 1000-row batch (≈ 2 MB) fills the
  // pipe and its write waits, so the first Ctrl-C keeps waiting for it; the second must not.
  const { jobUid } = ctx.sim.createJob({ rows: 3000, durationMs: 0, rowBytes: 2000 });
  const child = spawnCli(ctx, ["watch", jobUid, ...simFlags(ctx)], { stallStdout: true });
  await waitFor(() => child.stdout.length > 0, "the first batch being written");
  child.child.kill("SIGINT");
  await waitFor(() => child.stderr.includes("Ctrl-C again"), "the stopping note");
  child.child.kill("SIGINT");
  assert.equal((await child.exit).code, 130);
  assert.match(child.stderr, /second Ctrl-C: exiting now/);
});

test("Ctrl-C during `run`: the printed command watches the run scheduled (it does not schedule another)", async () => {
  writeFileSync(path.join(ctx.dir, "one.csv"), "linkedin_profile_url\nhttps://www.linkedin.com/in/ada\n");
  // Scheduled runs get the simulator's default: 2,000 rows over 20 s.
  const child = spawnCli(ctx, ["run", "wf-interrupted", "--inputs", "one.csv", "--out", "run.ndjson", ...simFlags(ctx)]);
  await waitFor(() => readScratch(ctx, "run.ndjson").includes('"row-0"'), "a first row in run.ndjson");
  child.child.kill("SIGINT");
  assert.equal((await child.exit).code, 130, child.stderr);
  const jobUid = /scheduled run (\S+)/.exec(child.stderr)?.[1];
  assert.match(resumeLine(child.stderr) ?? "", new RegExp(`^node \\S+ watch ${jobUid} --out run.ndjson .*--cursor `));
  assert.doesNotMatch(resumeLine(child.stderr), /--inputs|\brun\b wf/);
});
