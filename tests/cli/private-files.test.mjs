// The files the CLI writes hold personal data (the rows) and where a watch stands: they are
// created readable by their owner only, the state's temporary file cannot be redirected by a
// link planted in its directory, and an --out file that holds rows is not replaced unless
// --force says so.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { lstatSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { CLI, cliEnv, ndjsonIds, readScratch, rowIds, runCli, simFlags, useCliSim } from "./cli-fixture.mjs";

const ctx = useCliSim();
const mode = (name) => statSync(path.join(ctx.dir, name)).mode & 0o777;
const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;

/** The CLI started by a shell that first runs `before` and keeps its pid (exec), with the usual umask 022. */
function cliAfter(before, args) {
  const cli = [process.execPath, CLI, ...args].map(quote).join(" ");
  const child = spawn("sh", ["-c", `umask 022; ${before}; exec ${cli}`], { cwd: ctx.dir, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (s) => (out.stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr += s));
  return new Promise((resolve) => child.on("close", (code) => {
    ctx.texts.push({ where: "cli after a shell", text: out.stdout + out.stderr });
    resolve({ code, ...out });
  }));
}

test("--out and --state are created with mode 0600, even under umask 022", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1500, durationMs: 0 });
  const { code, stderr } = await cliAfter("true", ["watch", jobUid, "--out", "private.ndjson", "--state", "private.state.json", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "private.ndjson")), rowIds(1500));
  assert.equal(mode("private.ndjson").toString(8), "600");
  assert.equal(mode("private.state.json").toString(8), "600");
  // Rewritten after every batch (a rename of a new temporary file each time): still 0600.
  assert.equal(JSON.parse(readScratch(ctx, "private.state.json")).done, true);
});

test("a link planted at the state's old temporary name (.<state>.<pid>.tmp) is not followed: its target is untouched", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1200, durationMs: 0 });
  writeFileSync(path.join(ctx.dir, "victim.txt"), "precious\n");
  // `$$` is the shell's pid, which the CLI keeps (exec): the name an attacker could predict.
  const { code, stderr } = await cliAfter("ln -s victim.txt .trap.state.json.$$.tmp", ["watch", jobUid, "--out", "trap.ndjson", "--state", "trap.state.json", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  assert.equal(readScratch(ctx, "victim.txt"), "precious\n", "nothing written through the link");
  const state = JSON.parse(readScratch(ctx, "trap.state.json"));
  assert.equal(state.rows, 1200);
  assert.ok(lstatSync(path.join(ctx.dir, "trap.state.json")).isFile(), "the state is a file of its own");
  const leftovers = readdirSync(ctx.dir).filter((name) => name.startsWith(".trap.state.json.") && !lstatSync(path.join(ctx.dir, name)).isSymbolicLink());
  assert.deepEqual(leftovers, [], "no temporary file left behind");
});

test("a --state that is a link to a file that is no state: refused, before any request, its target untouched", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 20, durationMs: 0 });
  writeFileSync(path.join(ctx.dir, "elsewhere.txt"), "not a state\n");
  symlinkSync("elsewhere.txt", path.join(ctx.dir, "linked.state.json"));
  // A link to a file that is not a state: refused as such, before any request.
  const refused = await runCli(ctx, ["watch", jobUid, "--state", "linked.state.json", ...simFlags(ctx)]);
  assert.equal(refused.code, 2);
  assert.equal(readScratch(ctx, "elsewhere.txt"), "not a state\n");
});

test("an --out file that holds something is not replaced without --force; with --state or --cursor it is continued; --force replaces it", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 40, durationMs: 0 });
  writeFileSync(path.join(ctx.dir, "earlier.ndjson"), '{"id":"earlier-row"}\n');
  const requests = ctx.sim.stats().requests.total;
  for (const extra of [[], ["--state", "fresh.state.json"]]) {
    const refused = await runCli(ctx, ["watch", jobUid, "--out", "earlier.ndjson", ...extra, ...simFlags(ctx)]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /^captaindata-poller: --out earlier\.ndjson: the file exists \(21 bytes\) and would be replaced: pass --force to replace it/m);
  }
  assert.equal(readScratch(ctx, "earlier.ndjson"), '{"id":"earlier-row"}\n', "the file is as it was");
  assert.equal(ctx.sim.stats().requests.total, requests, "refused before any request");
  assert.equal(readScratch(ctx, "fresh.state.json"), "", "no state written");

  // An empty file, or a device, loses nothing: written without --force.
  writeFileSync(path.join(ctx.dir, "empty.ndjson"), "");
  assert.equal((await runCli(ctx, ["watch", jobUid, "--out", "empty.ndjson", "--quiet", ...simFlags(ctx)])).code, 0);
  assert.equal((await runCli(ctx, ["watch", jobUid, "--out", "/dev/null", "--quiet", ...simFlags(ctx)])).code, 0);

  const forced = await runCli(ctx, ["watch", jobUid, "--out", "earlier.ndjson", "--force", ...simFlags(ctx)]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "earlier.ndjson")), rowIds(40));

  // run: refused before the run is scheduled.
  writeFileSync(path.join(ctx.dir, "inputs.json"), '[{"linkedin_profile_url":"https://www.linkedin.com/in/ada"}]');
  const scheduled = ctx.sim.stats().requests.schedule;
  const run = await runCli(ctx, ["run", "wf-kept", "--inputs", "inputs.json", "--out", "earlier.ndjson", ...simFlags(ctx)]);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /--out earlier\.ndjson: the file exists/);
  assert.equal(ctx.sim.stats().requests.schedule, scheduled, "nothing scheduled");
});
