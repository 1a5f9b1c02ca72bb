// Where the CLI's credentials go (issue 34, point 7): a read token, however given, keeps the
// environment's key and project at home; header values from a file or a variable (not argv);
// no clear text to another machine; no control character of outside input on the terminal.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { createSim } from "../../sim/index.js";
import { leftOutNote, resumeCommand } from "../../bin/resume-command.mjs";
import { API_KEY, PROJECT_ID, cliEnv, runCli, useCliSim } from "./cli-fixture.mjs";

const TOKEN = "rt_live_9Zx3ReadTokenValue";
// A worker in front of the simulator: it records what each request brought, then answers with
// the simulator's own credentials (the worker holds the key).
const inner = createSim({ apiKey: "key-held-by-the-worker", projectId: "project-of-the-worker", seed: 31 });
const arrived = [];
const worker = Object.assign(Object.create(inner), {
  handle(request) {
    if (new URL(request.url).pathname.startsWith("/__sim/")) return inner.handle(request);
    const h = request.headers;
    arrived.push({ authorization: h.get("authorization"), apiKey: h.get("x-api-key"), project: h.get("x-project-id"), token: h.get("x-read-token"), trace: h.get("x-trace") });
    const headers = new Headers(request.headers);
    headers.set("authorization", "x-api-key key-held-by-the-worker");
    headers.set("x-project-id", "project-of-the-worker");
    return inner.handle(new Request(request, { headers }));
  },
});
const ctx = useCliSim({ sim: worker });

/** Every header value a request brought, as one text: the key and project must be in none. */
const sentText = (requests) => requests.map((r) => Object.values(r).join(" ")).join("\n");

test("a read token as --header, from a file or from a variable: the environment's key and project are not sent", async () => {
  const { jobUid } = worker.createJob({ rows: 5, durationMs: 0 });
  const file = path.join(ctx.dir, "token.headers");
  writeFileSync(file, `# the worker's read token\nx-read-token: ${TOKEN}\n\nx-trace: from-file\n`);
  const forms = [
    [["--header", `x-read-token: ${TOKEN}`], {}],
    [["--header", `X-Read-Token: ${TOKEN}`], {}],
    [["--header", `@${file}`], {}],
    [["--header-env", "x-read-token: MY_WORKER_TOKEN"], { MY_WORKER_TOKEN: TOKEN }],
  ];
  for (const [flags, extra] of forms) {
    arrived.length = 0;
    const { code, stdout, stderr } = await runCli(ctx, ["status", jobUid, "--json", "--base-url", ctx.baseUrl, ...flags], { env: cliEnv(extra) });
    assert.equal(code, 0, `${flags.join(" ")}: ${stderr}`);
    assert.equal(JSON.parse(stdout).status, "finished");
    assert.ok(arrived.length > 0, "the worker was asked");
    assert.ok(arrived.every((r) => r.token === TOKEN), `${flags.join(" ")}: the token was sent`);
    const sent = sentText(arrived);
    assert.ok(!sent.includes(API_KEY), `${flags.join(" ")}: the environment's API key went to --base-url`);
    assert.ok(!sent.includes(PROJECT_ID), `${flags.join(" ")}: the environment's project went to --base-url`);
    assert.ok(!stderr.includes(TOKEN) && !stdout.includes(TOKEN), "the token is never printed");
  }
  assert.ok(arrived.every((r) => r.trace === null), "--header-env sends its own header only");
});

test("--header @FILE and --header-env: clear errors naming the flag, the value never printed", async () => {
  const base = ["status", "j-1", "--base-url", ctx.baseUrl];
  const cases = [
    [["--header", "@missing.headers"], {}, /^captaindata-poller: --header @missing\.headers: cannot read it \(ENOENT\)$/m],
    [["--header-env", "x-read-token: UNSET_VARIABLE"], {}, /^captaindata-poller: --header-env x-read-token: the variable UNSET_VARIABLE is not set$/m],
    [["--header-env", "x-read-token: not a variable"], {}, /--header-env x-read-token: expected "name: VARIABLE"/],
    [["--header-env", "x-read-token: BAD"], { BAD: "line\nbreak-secret" }, /--header-env x-read-token \(BAD\) x-read-token: the value holds a line break or NUL/],
  ];
  writeFileSync(path.join(ctx.dir, "empty.headers"), "# nothing\n");
  cases.push([["--header", "@empty.headers"], {}, /--header @empty\.headers: the file holds no "name: value" line/]);
  for (const [flags, extra, message] of cases) {
    const { code, stderr } = await runCli(ctx, [...base, ...flags], { env: cliEnv(extra) });
    assert.equal(code, 2, `${flags.join(" ")}: ${stderr}`);
    assert.match(stderr, message);
    assert.ok(!stderr.includes("break-secret"), "a value is never printed");
  }
});

test("http:// to another machine is refused before any request, naming --base-url; loopback is fine", async () => {
  arrived.length = 0;
  for (const url of ["http://10.1.2.3:8787/v3", "http://worker.example.com/v3", "http://localhost.example.com/v3", "http://[fe80::1]:8787/v3"]) {
    const { code, stderr } = await runCli(ctx, ["status", "j-1", "--base-url", url, "--header", `x-read-token: ${TOKEN}`], { env: cliEnv() });
    assert.equal(code, 2, `${url}: ${stderr}`);
    assert.match(stderr, /--base-url http:\/\/\S+: http:\/\/ would send the credentials in clear text to another machine; use https:\/\//);
    assert.ok(!stderr.includes(TOKEN));
  }
  const { jobUid } = worker.createJob({ rows: 1, durationMs: 0 });
  const local = await runCli(ctx, ["status", jobUid, "--base-url", ctx.baseUrl.replace("127.0.0.1", "localhost"), "--header", `x-read-token: ${TOKEN}`], { env: cliEnv() });
  assert.equal(local.code, 0, local.stderr);
});

test("a crafted --state file: its job uid is shown without the terminal's escape sequences", async () => {
  const state = path.join(ctx.dir, "crafted.state.json");
  const jobUid = "run-1\u001b]0;owned\u0007\u001b[2J\u009b31m";
  writeFileSync(state, JSON.stringify({ version: 1, jobUid, workflowUid: "wf-a", outBytes: 0, rows: 0, cursor: null, columns: null }));
  writeFileSync(path.join(ctx.dir, "inputs.json"), JSON.stringify([{ linkedin_profile_url: "https://www.linkedin.com/in/ada" }]));
  const { code, stderr } = await runCli(ctx, ["run", "wf-b", "--inputs", "inputs.json", "--state", state, "--base-url", ctx.baseUrl], { env: cliEnv() });
  assert.equal(code, 2, stderr);
  assert.match(stderr, /follows run run-1/);
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(stderr), `a control character reached stderr: ${JSON.stringify(stderr)}`);
});

test("the resume command carries --header @FILE and --header-env (no value in them) and reminds a token set for one command", () => {
  const values = { header: ["@worker.headers", "x-proxy: secret-value"], "header-env": ["x-read-token: MY_TOKEN"] };
  const command = resumeCommand({ jobUid: "j-1", values, cursor: "c1" }, ["captaindata-poller"]);
  assert.equal(command, "captaindata-poller watch j-1 --header @worker.headers --header-env 'x-read-token: MY_TOKEN' --cursor c1");
  assert.match(leftOutNote(values), /add --header "x-proxy: …" with its value/);
  assert.match(leftOutNote({}, "CAPTAINDATA_READ_TOKEN"), /the read token: CAPTAINDATA_READ_TOKEN must be set for it too/);
  assert.equal(leftOutNote({}, null), "");
});
