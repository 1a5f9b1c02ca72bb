// What the CLI says when something is wrong, in its own words: the variable or flag that holds
// a refused key or project, a refused connection named at once (no silent retries, no advice
// meant for browsers), and after giving up (a timeout, retries exhausted) the command that
// resumes, which then delivers the rest with no row twice.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { test } from "node:test";
import { cliEnv, ndjsonIds, readScratch, rowIds, runCli, simFlags, spawnCli, useCliSim, waitFor } from "./cli-fixture.mjs";

const ctx = useCliSim();
const resumeLine = (stderr) => /To resume:\n {2}(.+)\n/.exec(stderr)?.[1];

/** Runs a printed shell command in the scratch directory, as the person would paste it. */
function runPasted(command) {
  const child = spawn("bash", ["-c", command], { cwd: ctx.dir, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (s) => (out.stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr += s));
  return new Promise((resolve) => child.on("close", (code) => {
    ctx.texts.push({ where: "pasted command", text: out.stdout + out.stderr });
    resolve({ code, ...out });
  }));
}

/** A port on 127.0.0.1 where nothing listens (taken, then released). */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("a refused key or project names the variable or flag that holds it", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10, durationMs: 0 });
  writeFileSync(path.join(ctx.dir, "wrong.key"), "sk_wrong_key_in_a_file\n");
  const cases = [
    [[], { CAPTAINDATA_API_KEY: "sk_wrong_key_in_env" }, /error: UNAUTHORIZED: HTTP 401.*: the API key was refused: check CAPTAINDATA_API_KEY \(or pass --api-key-file FILE\)/],
    [["--api-key-file", "wrong.key"], {}, /error: UNAUTHORIZED: HTTP 401.*: the API key was refused: check --api-key-file wrong\.key/],
    [[], { CAPTAINDATA_PROJECT_ID: "another-project" }, /error: UNAUTHORIZED: HTTP 403.*: the project was refused: check CAPTAINDATA_PROJECT_ID/],
    [["--project-id", "another-project"], {}, /the project was refused: check --project-id/],
  ];
  for (const [flags, env, message] of cases) {
    for (const command of ["watch", "status"]) {
      const connection = command === "status" ? ["--base-url", ctx.baseUrl] : simFlags(ctx);
      const { code, stderr } = await runCli(ctx, [command, jobUid, ...flags, ...connection], { env: cliEnv(env) });
      assert.equal(code, 3, `${command} ${flags.join(" ")}: ${stderr}`);
      assert.match(stderr, message, `${command} ${flags.join(" ")}`);
      assert.doesNotMatch(stderr, /sk_wrong_key|another-project/, "the refused values are not printed");
    }
  }
});

test("a refused connection: said at once, with the address, exit 4; no retries, no browser advice", async () => {
  const port = await closedPort();
  const base = `http://127.0.0.1:${port}/v3`;
  writeFileSync(path.join(ctx.dir, "one.json"), '[{"linkedin_profile_url":"https://www.linkedin.com/in/ada"}]');
  for (const args of [["watch", "job-1", "--state", "refused.state.json", "--interval", "200ms"], ["status", "job-1"], ["run", "wf-1", "--inputs", "one.json"]]) {
    const { code, stderr } = await runCli(ctx, [...args, "--base-url", base]);
    assert.equal(code, 4, `${args[0]}: ${stderr}`);
    assert.match(stderr, new RegExp(`error: (scheduling workflow wf-1 failed: )?connection refused to 127\\.0\\.0\\.1:${port} \\(--base-url ${base.replaceAll(".", "\\.")}\\): is the server running`));
    assert.doesNotMatch(stderr, /CORS|browser|proxy such as|RETRIES_EXHAUSTED|retries|baseUrl/, `${args[0]}: ${stderr}`);
  }
  // watch also prints how to try again, and its state says nothing was written.
  const { stderr } = await runCli(ctx, ["watch", "job-1", "--state", "refused.state.json", "--base-url", base]);
  assert.match(resumeLine(stderr) ?? "", /watch job-1 --state refused\.state\.json --base-url /);
  assert.equal(JSON.parse(readScratch(ctx, "refused.state.json")).rows, 0);
});

test("--timeout: exit 4 with the command that resumes; once the run ends, it delivers the rest, none twice", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 2400, durationMs: 600_000, arrival: { bursts: 300 } });
  const first = spawnCli(ctx, ["watch", jobUid, "--out", "timeout.ndjson", "--state", "timeout.state.json", "--timeout", "2s", ...simFlags(ctx)]);
  assert.equal((await first.exit).code, 4, first.stderr);
  assert.match(first.stderr, /error: TIMEOUT: .*; [\d,]+ rows? written to timeout\.ndjson\. To resume:\n/);
  const command = resumeLine(first.stderr);
  assert.match(command ?? "", new RegExp(`watch ${jobUid} --out timeout\\.ndjson --state timeout\\.state\\.json .*--timeout 2s`));
  ctx.sim.finish(jobUid);
  const second = await runPasted(command);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "timeout.ndjson")), rowIds(2400), "every row once, in order");
});

test("RETRIES_EXHAUSTED (the API answers 503 to every retry): exit 4 with the command that resumes; it delivers the rest", { timeout: 120_000 }, async () => {
  // The second results page fails for six requests in a row: the first and the five retries.
  const { jobUid } = ctx.sim.createJob({ rows: 2000, durationMs: 0, faults: { script: [{ kind: "results", nth: 2, respond: 503, count: 6 }] } });
  const first = spawnCli(ctx, ["watch", jobUid, "--out", "retries.ndjson", "--state", "retries.state.json", ...simFlags(ctx)]);
  await waitFor(() => readScratch(ctx, "retries.ndjson").includes('"row-999"'), "the first page written");
  assert.equal((await first.exit).code, 4, first.stderr);
  assert.match(first.stderr, /error: RETRIES_EXHAUSTED: .*; 1,000 rows written to retries\.ndjson\. To resume:\n/);
  assert.doesNotMatch(first.stderr, /CORS|browser|baseUrl/);
  const second = await runPasted(resumeLine(first.stderr));
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "retries.ndjson")), rowIds(2000), "every row once, in order");
});

test("refused mid-run (the server restarts): said once, retried, and the watch ends with every row once", { timeout: 120_000 }, async () => {
  const { startSimServer } = await import("../../sim/server.mjs");
  const { API_KEY, PROJECT_ID } = await import("./cli-fixture.mjs");
  const { createSim } = await import("../../sim/index.js");
  const sim = createSim({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 31 });
  let server = await startSimServer({ sim });
  const { port } = server;
  try {
    const { jobUid } = sim.createJob({ rows: 3000, durationMs: 600_000, arrival: { bursts: 300 } });
    const child = spawnCli(ctx, ["watch", jobUid, "--out", "restart.ndjson", "--state", "restart.state.json", "--base-url", server.url, "--interval", "200ms"]);
    await waitFor(() => readScratch(ctx, "restart.ndjson").includes('"row-0"'), "a first row");
    await server.close();
    await waitFor(() => child.stderr.includes(`connection refused to 127.0.0.1:${port}: retrying`), "the refusal said");
    server = await startSimServer({ sim, port });
    sim.finish(jobUid);
    assert.equal((await child.exit).code, 0, child.stderr);
    assert.equal(child.stderr.match(/connection refused/g).length, 1, "said once");
    assert.deepEqual(ndjsonIds(readScratch(ctx, "restart.ndjson")), rowIds(3000));
  } finally {
    await server.close();
  }
});
