// `node sim/server.mjs` as a person starts it: `--help` prints the options and starts nothing;
// a bad flag exits 2; started, it serves the API and the control routes its README documents.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
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
