// `node sim/server.mjs` as a person starts it: `--help` prints the options and starts nothing;
// a bad flag exits 2; started, it serves the API and the control routes its README documents.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { waitFor } from "./cli-fixture.mjs";

const SERVER = path.join(root, "sim", "server.mjs");

function start(args, env = {}) {
  const child = spawn(process.execPath, [SERVER, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const out = { child, stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (s) => (out.stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr += s));
  out.exit = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  return out;
}

test("--help prints the options on stdout and exits 0 without starting a server", async () => {
  for (const flag of ["--help", "-h"]) {
    // PORT set to a port it would listen on: --help must not take it.
    const run = start([flag], { PORT: "0" });
    assert.equal(await run.exit, 0, run.stderr);
    assert.match(run.stdout, /^Usage: node sim\/server\.mjs \[options\]/);
    for (const option of ["--port N", "--api-key KEY", "--project-id ID", "--seed N", "--rows N", "--duration MS", "POST /__sim/jobs"]) {
      assert.ok(run.stdout.includes(option), `${option} in the help`);
    }
    assert.doesNotMatch(run.stdout, /^simulator: /m, "no server started");
  }
  const bad = start(["--prot", "1"]);
  assert.equal(await bad.exit, 2);
  assert.match(bad.stderr, /Unknown option '--prot'.*\nRun node sim\/server\.mjs --help/s);
  const port = start(["--port", "eighty"]);
  assert.equal(await port.exit, 2);
  assert.match(port.stderr, /--port: expected a whole number \(got "eighty"\)/);
});

test("started with --port 0 and its own key: the control routes of sim/README.md answer as documented", async () => {
  const run = start(["--port", "0", "--api-key", "k-doc-1", "--project-id", "p-doc", "--rows", "30", "--duration", "100000"]);
  try {
    // The last of its lines: all of them printed.
    await waitFor(() => /^watch it: /m.test(run.stdout), "the server's lines");
    const url = /^simulator: (\S+)/m.exec(run.stdout)?.[1];
    assert.match(run.stdout, /^watch it: CAPTAINDATA_API_KEY=k-doc-1 CAPTAINDATA_PROJECT_ID=p-doc npx captaindata-poller watch \S+ --base-url http:\/\/127\.0\.0\.1:\d+\/v3/m);
    const origin = new URL(url).origin;
    const call = async (method, route, body) => {
      const response = await fetch(`${origin}${route}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: response.status, body: await response.json() };
    };
    const created = await call("POST", "/__sim/jobs", { rows: 40, durationMs: 600_000, startDelayMs: 600_000 });
    assert.equal(created.status, 201);
    const uid = created.body.jobUid;
    assert.equal((await call("GET", `/__sim/jobs/${uid}`)).body.status, "pending");
    assert.equal((await call("POST", `/__sim/jobs/${uid}/start`)).status, 200);
    assert.equal((await call("GET", `/__sim/jobs/${uid}`)).body.status, "running");
    assert.equal((await call("POST", `/__sim/jobs/${uid}/finish`, { status: "warning" })).status, 200);
    const ended = (await call("GET", `/__sim/jobs/${uid}`)).body;
    assert.deepEqual([ended.status, ended.rowsAvailable], ["warning", 40]);
    // The API side, with the credentials given on the command line.
    const api = await fetch(`${url}/jobs/${uid}/results`, { headers: { authorization: "x-api-key k-doc-1", "x-project-id": "p-doc" } });
    assert.equal((await api.json()).results.length, 40);
    const stats = await call("GET", `/__sim/stats?job=${uid}`);
    assert.equal(stats.body.requests.results, 1, "control routes are not counted; the API call is");
    assert.equal((await call("GET", "/__sim/webhooks")).status, 200);
    assert.equal((await call("GET", "/__sim/nothing")).status, 404);
    assert.deepEqual((await call("POST", "/__sim/reset")).body, { ok: true });
    assert.equal((await call("GET", `/__sim/jobs/${uid}`)).status, 404, "reset forgets every job");
  } finally {
    run.child.kill("SIGTERM");
    await run.exit;
  }
  // Every control route the server answers is in its README section.
  const readme = readFileSync(path.join(root, "sim", "README.md"), "utf8");
  const at = readme.indexOf("## Control endpoints (HTTP)");
  assert.ok(at !== -1, "the section exists");
  const section = readme.slice(at, readme.indexOf("\n## ", at + 1));
  for (const route of ["POST /__sim/jobs`", "GET /__sim/jobs/{uid}`", "/start`", "/finish`", "/stop`", "/naive?intervalMs=", "GET /__sim/stats", "GET /__sim/webhooks`", "POST /__sim/reset`"]) {
    assert.ok(section.includes(route), `${route} documented in sim/README.md`);
  }
});

/** A callback receiver on loopback: the bodies POSTed to it. */
async function receiver() {
  const received = [];
  const server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    received.push(JSON.parse(text));
    res.end("{}");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/cb`, received, close: () => new Promise((r) => server.close(r)) };
}

test("the v4 flags: listed by --help, a bad value exits 2 naming the flag, the run's shape and faults set from the command line", async () => {
  const help = start(["--help"]);
  assert.equal(await help.exit, 0);
  for (const flag of ["--v4-rows N", "--v4-rows-per-callback N", "--v4-duration MS", "--v4-lost SHARE", "--v4-duplicated", "--v4-delayed", "--v4-reordered", "--v4-unacknowledged", "--v4-final-lost", "--v4-replays-lost [SHARE]"]) {
    assert.ok(help.stdout.includes(flag), `${flag} in the help`);
  }
  for (const [args, message] of [
    [["--v4-lost", "2"], /--v4-lost: expected a share from 0 to 1, e.g\. 0\.2 \(got "2"\)/],
    [["--v4-rows-per-callback", "0"], /--v4-rows-per-callback: expected a whole number ≥ 1 \(got "0"\)/],
    [["--v4-outcome", "DONE"], /--v4-outcome: expected one of SUCCEEDED/],
  ]) {
    const bad = start(args);
    assert.equal(await bad.exit, 2, args.join(" "));
    assert.match(bad.stderr, message);
  }
  const cb = await receiver();
  // 7 rows per input, 2 inputs: 14 rows in pages of at most 3, each page one input's; every first
  // callback lost and every replay lost too (the flag alone).
  const run = start(["--port", "0", "--v4-rows", "7", "--v4-rows-per-callback", "3", "--v4-duration", "300", "--v4-lost", "1", "--v4-replays-lost"]);
  try {
    await waitFor(() => /^watch it: /m.test(run.stdout), "the server's lines");
    assert.match(run.stdout, /^v4: .*7 rows per input, 3 per callback, over 0\.3 s; faults: lostRate 1, replayLostRate 1$/m);
    const origin = new URL(/^simulator: (\S+)/m.exec(run.stdout)[1]).origin;
    const v4 = (method, route, body) =>
      fetch(`${origin}/v4${route}`, { method, headers: { "x-api-key": "sim-key", "content-type": "application/json" }, body: body && JSON.stringify(body) }).then((r) => r.json());
    const inputs = [{ url: "a" }, { url: "b" }];
    const { run_uid: lostUid } = await v4("POST", "/actions/x/async", { inputs, callback: { url: cb.url } });
    await waitFor(async () => (await v4("GET", `/runs/${lostUid}`)).status === "SUCCEEDED", "the lost run's end");
    const deliveries = await v4("GET", `/runs/callbacks?run_uid=${lostUid}&limit=100`);
    assert.equal(deliveries.length, 7, "3 + 3 pages and the final one");
    assert.ok(deliveries.every((d) => d.status === "FAILED"));
    const replay = await v4("POST", `/runs/callbacks/${deliveries[0].uid}/replay`);
    await waitFor(async () => (await v4("GET", `/runs/callbacks/${replay.uid}`)).status === "FAILED", "the replay lost");
    assert.equal(cb.received.length, 0, "nothing reached the receiver");
  } finally {
    run.child.kill("SIGTERM");
    await run.exit;
  }
  const shaped = start(["--port", "0", "--v4-rows", "7", "--v4-rows-per-callback", "3", "--v4-duration", "300"]);
  try {
    await waitFor(() => /^watch it: /m.test(shaped.stdout), "the server's lines");
    const origin = new URL(/^simulator: (\S+)/m.exec(shaped.stdout)[1]).origin;
    const inputs = [{ url: "a" }, { url: "b" }];
    const launched = await fetch(`${origin}/v4/actions/x/async`, {
      method: "POST",
      headers: { "x-api-key": "sim-key", "content-type": "application/json" },
      body: JSON.stringify({ inputs, callback: { url: cb.url } }),
    }).then((r) => r.json());
    await waitFor(() => cb.received.some((b) => b.run.status === "SUCCEEDED"), "the final callback");
    const mine = cb.received.filter((b) => b.run.run_uid === launched.run_uid);
    const ids = mine.flatMap((b) => b.results.map((r) => r.id));
    assert.deepEqual(ids, Array.from({ length: 14 }, (_, i) => `row-${i}`), "7 rows per input, each once");
    assert.deepEqual(mine.map((b) => [b.results.length, b.input?.url ?? null]), [[3, "a"], [3, "a"], [1, "a"], [3, "b"], [3, "b"], [1, "b"], [0, null]]);
  } finally {
    shaped.child.kill("SIGTERM");
    await shaped.exit;
    await cb.close();
  }
});

test("a busy --port names the flag and the port, exits 1 (no bare EADDRINUSE)", async () => {
  const taken = createServer();
  await new Promise((resolve) => taken.listen(0, "127.0.0.1", resolve));
  const port = taken.address().port;
  try {
    const run = start(["--port", String(port)]);
    assert.equal(await run.exit, 1);
    assert.equal(run.stderr.trim(), `port ${port} is in use: set --port (or PORT) to a free port (0: any free port)`);
  } finally {
    await new Promise((r) => taken.close(r));
  }
});
