// The CLI through a proxy that holds the key: the project's worker (in workerd, through
// Miniflare) with a run's read token (`--read-token` or CAPTAINDATA_READ_TOKEN), and a proxy
// that checks a header of its own (`--header`). No API key on the command line or in the
// environment; token and header values never printed: not in errors, progress, files, nor
// in the command that resumes (it says to give them again).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, test } from "node:test";
import { createSim } from "../../sim/index.js";
import { startWorker } from "../worker/worker-fixture.mjs";
import { cliEnv, ndjsonIds, readScratch, rowIds, runCli, spawnCli, useCliSim, waitFor } from "./cli-fixture.mjs";

// A proxy in front of the simulator: it checks `x-proxy-key` and adds the credentials itself.
// A wrong key is answered with a message that echoes it, as a careless proxy might.
const PROXY_KEY = "px_live_8Jd2Kq0ZwHeaderSecret";
const inner = createSim({ apiKey: "key-held-by-the-proxy", projectId: "project-of-the-proxy", seed: 29 });
const arrived = []; // the credentials each API request brought to the proxy
const proxy = Object.assign(Object.create(inner), {
  handle(request) {
    if (new URL(request.url).pathname.startsWith("/__sim/")) return inner.handle(request);
    arrived.push({ authorization: request.headers.get("authorization"), project: request.headers.get("x-project-id"), token: request.headers.get("x-read-token") });
    const presented = request.headers.get("x-proxy-key");
    if (presented !== PROXY_KEY) {
      return Promise.resolve(Response.json({ message: `proxy key ${presented} refused` }, { status: 401 }));
    }
    const headers = new Headers(request.headers);
    headers.set("authorization", "x-api-key key-held-by-the-proxy");
    headers.set("x-project-id", "project-of-the-proxy");
    return inner.handle(new Request(request, { headers }));
  },
});
const ctx = useCliSim({ sim: proxy });
/** A user with no key and no project: only what the proxy checks. */
const env = (extra = {}) => cliEnv({ CAPTAINDATA_API_KEY: "", CAPTAINDATA_PROJECT_ID: "", ...extra });

let w;
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "200" } });
});
after(async () => {
  await w?.close();
  // Neither secret appears in anything the CLI printed or wrote (files are audited by useCliSim's key check too).
  for (const { where, text } of ctx.texts) {
    assert.ok(!text.includes(PROXY_KEY), `the --header value appears in ${where}`);
    for (const token of tokens) assert.ok(!text.includes(token), `a read token appears in ${where}`);
  }
});
const tokens = [];

test("watch through the worker with --read-token: every row once, in order; status with CAPTAINDATA_READ_TOKEN", { timeout: 120_000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 2500, durationMs: 3000, arrival: { bursts: 3 } });
  const token = await w.track(jobUid);
  tokens.push(token);
  const base = `${w.origin}/v3`;
  const watched = await runCli(ctx, ["watch", jobUid, "--base-url", base, "--read-token", token, "--interval", "300ms", "--out", "worker.ndjson", "--state", "worker.state.json"], { env: env() });
  assert.equal(watched.code, 0, watched.stderr);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "worker.ndjson")), rowIds(2500));
  assert.match(watched.stderr, /done: run finished, 2,500 rows/);

  const status = await runCli(ctx, ["status", jobUid, "--json", "--base-url", base], { env: env({ CAPTAINDATA_READ_TOKEN: token }) });
  assert.equal(status.code, 0, status.stderr);
  assert.equal(JSON.parse(status.stdout).status, "finished");
});

test("a read token that does not open the run: exit 3, saying so and naming --read-token (or CAPTAINDATA_READ_TOKEN), the token not printed (issue 37, point 5)", { timeout: 60_000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 10, durationMs: 0 });
  const token = await w.track(jobUid);
  const { jobUid: other } = w.sim.createJob({ rows: 10, durationMs: 0 });
  tokens.push(token, await w.track(other));
  // The token of another run.
  for (const [flags, extra, named] of [[["--read-token", token], {}, "--read-token"], [[], { CAPTAINDATA_READ_TOKEN: token }, "CAPTAINDATA_READ_TOKEN"]]) {
    const { code, stderr } = await runCli(ctx, ["watch", other, "--base-url", `${w.origin}/v3`, "--interval", "300ms", ...flags], { env: env(extra) });
    assert.equal(code, 3, stderr);
    assert.match(stderr, new RegExp(`error: UNAUTHORIZED: HTTP 403.*The read token does not open this run.*: the read token does not open this run: check the job uid and ${named} \\(each run has its own read token`));
    assert.doesNotMatch(stderr, /refused the credentials/, "the token was read; it does not open this run");
  }
});

test("--header through a proxy that checks it: the rows; a refused value is redacted even when the proxy echoes it", async () => {
  const { jobUid } = proxy.createJob({ rows: 1200, durationMs: 400 });
  const flags = ["--base-url", ctx.baseUrl, "--interval", "200ms"];
  const ok = await runCli(ctx, ["watch", jobUid, "--header", `x-proxy-key: ${PROXY_KEY}`, ...flags], { env: env() });
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(ndjsonIds(ok.stdout), rowIds(1200));

  const wrong = `${PROXY_KEY}-but-wrong`;
  const refused = await runCli(ctx, ["watch", jobUid, "--header", `X-Proxy-Key: ${wrong}`, ...flags], { env: env() });
  assert.equal(refused.code, 3, refused.stderr);
  assert.match(refused.stderr, /UNAUTHORIZED: HTTP 401: proxy key \[--header x-proxy-key\] refused.*: the server at --base-url refused the credentials: check --header x-proxy-key/);
  assert.ok(!refused.stderr.includes("-but-wrong"), "the value is not printed");
});

test("interrupted with --header and --read-token: the resume command holds neither value and says to give them again; with them it continues", { timeout: 60_000 }, async () => {
  const { jobUid } = proxy.createJob({ rows: 3000, durationMs: 600_000, arrival: { bursts: 300 } });
  const readToken = "rt_not_checked_by_this_proxy_42";
  tokens.push(readToken);
  const args = ["watch", jobUid, "--base-url", ctx.baseUrl, "--interval", "200ms", "--header", `x-proxy-key: ${PROXY_KEY}`, "--read-token", readToken, "--out", "proxied.ndjson", "--state", "proxied.state.json"];
  const first = spawnCli(ctx, args, { env: env() });
  await waitFor(() => readScratch(ctx, "proxied.ndjson").includes('"row-0"'), "a first row");
  first.child.kill("SIGINT");
  assert.equal((await first.exit).code, 130, first.stderr);
  const [, command, note] = /To resume:\n {2}(.+)\n {2}(.+)\n/.exec(first.stderr) ?? [];
  assert.match(command ?? "", new RegExp(`watch ${jobUid} --out proxied\\.ndjson --state proxied\\.state\\.json --base-url \\S+ --interval 200ms$`));
  assert.equal(note, '(secrets are not printed; give them again: the read token: set CAPTAINDATA_READ_TOKEN, or add --read-token TOKEN; add --header "x-proxy-key: …" with its value)');

  // The person adds the header back, as the note says; the rest of the rows, none twice.
  proxy.finish(jobUid);
  const child = spawn("bash", ["-c", `${command} --header 'x-proxy-key: ${PROXY_KEY}'`], { cwd: ctx.dir, env: env({ CAPTAINDATA_READ_TOKEN: readToken }), stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  const code = await new Promise((resolve) => child.on("close", resolve));
  ctx.texts.push({ where: "resumed through the proxy", text: stderr });
  assert.equal(code, 0, stderr);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "proxied.ndjson")), rowIds(3000));
});

test("with a read token, the API key and project of the environment stay home: not sent to --base-url", async () => {
  const { jobUid } = proxy.createJob({ rows: 30, durationMs: 0 });
  arrived.length = 0;
  // The user's environment holds the key and project for the API (cliEnv), and a read token for the proxy.
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, "--base-url", ctx.baseUrl, "--interval", "200ms", "--header", `x-proxy-key: ${PROXY_KEY}`], { env: cliEnv({ CAPTAINDATA_READ_TOKEN: "rt_home_test_1" }) });
  tokens.push("rt_home_test_1");
  assert.equal(code, 0, stderr);
  assert.deepEqual(ndjsonIds(stdout), rowIds(30));
  assert.ok(arrived.length > 0);
  assert.deepEqual(arrived.filter((r) => r.authorization !== null || r.project !== null), [], "no key, no project id sent to the proxy");
  assert.ok(arrived.every((r) => r.token === "rt_home_test_1"), "the read token sent as x-read-token");
});
