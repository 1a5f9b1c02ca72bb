// Stopped from outside: the reader of stdout going away (`| head -n 3`), SIGTERM and SIGHUP.
// A closed pipe stops the poller at once and exits 141 without a word; a signal stops like
// Ctrl-C (the batch being written finished, the state saved, the resume command printed)
// with the shell's 128 + signal number; the state never runs ahead of the rows.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { CLI, cliEnv, ndjsonIds, readScratch, rowIds, spawnCli, simFlags, useCliSim, waitFor } from "./cli-fixture.mjs";

const ctx = useCliSim();
const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;

/** A shell pipeline `cli … | head -n 3`, as typed: the CLI's exit code is written to `codeFile`. */
function intoHead(args, codeFile) {
  const cli = [process.execPath, CLI, ...args].map(quote).join(" ");
  const child = spawn("bash", ["-c", `${cli} | head -n 3; echo "\${PIPESTATUS[0]}" > ${quote(codeFile)}`], { cwd: ctx.dir, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (s) => (out.stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr += s));
  return new Promise((resolve) => child.on("close", () => {
    ctx.texts.push({ where: "pipeline", text: out.stdout + out.stderr });
    resolve({ ...out, code: Number(readScratch(ctx, codeFile).trim()) });
  }));
}

/** A long run whose first batch (1,000 rows of 2 kB) is far larger than a pipe's buffer. */
const longRun = () => ctx.sim.createJob({ rows: 3000, durationMs: 60_000, arrival: { bursts: 3 }, rowBytes: 2000 }).jobUid;

test("`| head -n 3`: three rows, then the poller stops at once: exit 141, no message, no stack trace, the state not ahead", async () => {
  const jobUid = longRun();
  const quiet = await intoHead(["watch", jobUid, "--quiet", "--state", "pipe.state.json", ...simFlags(ctx)], "pipe.code");
  assert.equal(quiet.stdout.split("\n").filter(Boolean).length, 3);
  assert.deepEqual(ndjsonIds(quiet.stdout), rowIds(3));
  assert.equal(quiet.code, 141, quiet.stderr);
  assert.equal(quiet.stderr, "", "nothing on stderr");
  assert.equal(ctx.sim.job(jobUid).status, "running", "it stopped long before the run's end");
  // The first batch could not be written whole: the state still says "before it".
  const state = JSON.parse(readScratch(ctx, "pipe.state.json"));
  assert.equal(state.rows, 0);
  assert.equal(state.cursor, null);
  assert.equal(state.done, false);

  // Without --quiet: the log lines of a pipe, and still no error text.
  const chatty = await intoHead(["watch", longRun(), ...simFlags(ctx)], "pipe2.code");
  assert.equal(chatty.code, 141, chatty.stderr);
  assert.match(chatty.stderr, /^watching run /m);
  assert.doesNotMatch(chatty.stderr, /EPIPE|error|Error|\n {4}at /);
});

/** Rows in bursts over a few seconds: long enough to be stopped after the first rows. */
const slowRun = (rows = 2400) => ctx.sim.createJob({ rows, durationMs: 4000, arrival: { bursts: 6 } }).jobUid;
const resumeLine = (stderr) => /To resume:\n {2}(.+)\n/.exec(stderr)?.[1];

for (const [signal, code] of [["SIGTERM", 143], ["SIGHUP", 129]]) {
  test(`${signal} stops like Ctrl-C: exit ${code}, the batch finished, the state saved, the resume command printed`, async () => {
    const jobUid = slowRun();
    const name = signal.toLowerCase();
    const args = ["watch", jobUid, "--out", `${name}.ndjson`, "--state", `${name}.state.json`, ...simFlags(ctx)];
    const first = spawnCli(ctx, args);
    await waitFor(() => readScratch(ctx, `${name}.ndjson`).includes('"row-0"'), `a first row in ${name}.ndjson`);
    first.child.kill(signal);
    assert.equal((await first.exit).code, code, first.stderr);
    assert.match(first.stderr, new RegExp(`stopped by ${signal}: [\\d,]+ rows? written to ${name}\\.ndjson\\. To resume:`));
    assert.equal(ctx.sim.job(jobUid).status, "running", "stopped mid-run");
    const written = ndjsonIds(readScratch(ctx, `${name}.ndjson`));
    assert.deepEqual(written, rowIds(written.length), "whole batches only");
    assert.equal(JSON.parse(readScratch(ctx, `${name}.state.json`)).rows, written.length, "the state matches the rows on disk");
    assert.match(resumeLine(first.stderr) ?? "", new RegExp(`watch ${jobUid} .*--state ${name}\\.state\\.json`));
    assert.doesNotMatch(resumeLine(first.stderr), /--cursor/, "with --state, the state says where");

    const again = spawnCli(ctx, args);
    assert.equal((await again.exit).code, 0, again.stderr);
    assert.deepEqual(ndjsonIds(readScratch(ctx, `${name}.ndjson`)), rowIds(2400), "every row once, in order");
  });
}

test("SIGTERM before the first row: exit 143 and the command that resumes", async () => {
  const child = spawnCli(ctx, ["watch", slowRun(), "--state", "early.state.json", ...simFlags(ctx)]);
  await waitFor(() => child.stderr.includes("watching run"), "the watch started");
  child.child.kill("SIGTERM");
  assert.equal((await child.exit).code, 143, child.stderr);
  assert.match(child.stderr, /To resume:\n/);
});
