// The README's terminal lines, run as written. examples/cli/simulator.sh: `npm start` in the
// repository, then the `npx captaindata-poller run …` line in an app that installed the package,
// on 127.0.0.1:8080 exactly as the README says: inside a network namespace of its own (its own
// loopback, no route out), so neither another test's port 8080 nor the network is in the way.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { exampleDir } from "./example-fixture.mjs";

/** Runs `script` with bash in a new network namespace; resolves with its exit code and output. */
function inNetworkNamespace(script, { cwd, env = {} }) {
  return new Promise((resolve, reject) => {
    const child = spawn("unshare", ["--net", "bash", "-c", script], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("examples/cli/simulator.sh as written: npm start, then the CLI runs a simulated run and prints its rows", async (t) => {
  const [serverLine, cliLine, ...rest] = readFileSync(path.join(root, "examples", "cli", "simulator.sh"), "utf8").trimEnd().split("\n");
  assert.deepEqual(rest, [], "two lines");
  assert.match(serverLine, /^npm start\b/);
  const app = exampleDir("cli");
  t.after(() => app.remove());
  // What `npm install captaindata-poller` leaves for npx: the package and its bin.
  const { bin } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const bins = path.join(app.dir, "node_modules", ".bin");
  const driver = [
    "set -um", // job control: the background server gets a process group of its own, ended on exit
    "ip link set lo up",
    // Line 1 in the repository, in the background (the README: "in another terminal").
    "(",
    'cd "$ROOT"',
    serverLine,
    ') > "$APP/server.log" 2>&1 &',
    "server=$!",
    "trap 'kill -- -$server 2>/dev/null' EXIT",
    // Bounded wait for the demo server (the condition, not a duration): at most 120 s.
    "for i in $(seq 1 1200); do curl -sf -o /dev/null http://127.0.0.1:8080/ && break; sleep 0.1; done",
    'curl -sf -o /dev/null http://127.0.0.1:8080/ || { cat "$APP/server.log" >&2; exit 90; }',
    // Line 2 in the app, as written.
    `cd "$APP" && mkdir -p "${bins}" && ln -sf "$ROOT/${bin["captaindata-poller"]}" "${bins}/captaindata-poller"`,
    cliLine,
  ].join("\n");
  writeFileSync(path.join(app.dir, "driver.sh"), driver);
  const out = await inNetworkNamespace(driver, { cwd: app.dir, env: { ROOT: root, APP: app.dir, npm_config_offline: "true" } });
  assert.equal(out.code, 0, `${out.stderr.slice(-2000)}`);
  const rows = out.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.ok(rows.length > 0, "rows on stdout");
  assert.deepEqual(rows.map((r) => r.id), rows.map((_, i) => `row-${i}`), "NDJSON, every row once, in order");
  assert.ok(!out.stdout.includes("sim-key") && !out.stderr.includes("sim-key"), "the key is never printed");
});
