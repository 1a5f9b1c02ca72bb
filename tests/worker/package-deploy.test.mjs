// The worker as a user gets it: `npm pack`, installed into a fresh app with no Rust toolchain,
// the README's one-line worker and wrangler config (examples/worker, as shipped in the package),
// `wrangler deploy --dry-run` bundling it with no network, and that bundle run in workerd
// against the simulator: a run tracked and its rows served.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { rowIds, startWorker } from "./worker-fixture.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const WRANGLER = path.join(root, "node_modules", ".bin", "wrangler");
const EXAMPLE = path.join("node_modules", "captaindata-poller", "examples", "worker");
// The worker's secrets, as the worker's config lists them (`wrangler secret put` / `.dev.vars`).
const { SECRET_NAMES } = await import(path.join(root, "worker", "src", "config.js")).catch(() => ({ SECRET_NAMES: null }));

let app;
let tarball;
before(() => {
  for (const built of ["pkg/captaindata_poller_bg.wasm", "dist/workerd.js"]) {
    assert.ok(existsSync(path.join(root, built)), `${built} is not built: run \`npm run build\` first`);
  }
  app = mkdtempSync(path.join(tmpdir(), "cdp-worker-app-"));
  // --ignore-scripts: prepack would rebuild the wasm; the test packs what is built.
  const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", app], { cwd: root, encoding: "utf8" });
  tarball = path.join(app, JSON.parse(packed)[0].filename);
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "my-worker", private: true, type: "module" }, null, 2));
});
after(() => rmSync(app, { recursive: true, force: true }));

/** A PATH with node and the system's tools, without the Rust toolchains (~/.cargo/bin). */
function pathWithoutRust() {
  const dirs = [path.dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];
  const found = spawnSync("sh", ["-c", "command -v cargo rustc wasm-bindgen"], { env: { PATH: dirs.join(":") }, encoding: "utf8" }).stdout.trim();
  assert.equal(found, "", "this PATH must hold no Rust tool");
  return dirs.join(":");
}

/** Runs a command in the app with no network at all (a network namespace of its own), as root can. */
function offline(command, args) {
  const env = { PATH: pathWithoutRust(), HOME: app, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" };
  const isolated = spawnSync("unshare", ["-n", "--", "true"]).status === 0;
  const [file, argv] = isolated ? ["unshare", ["-n", "--", command, ...args]] : [command, args];
  // Without unshare (not root): a proxy that refuses every connection stands for no network.
  if (!isolated) Object.assign(env, { HTTPS_PROXY: "http://127.0.0.1:9", HTTP_PROXY: "http://127.0.0.1:9" });
  const result = spawnSync(file, argv, { cwd: app, env, encoding: "utf8", timeout: 300_000 });
  return { ...result, isolated, output: `${result.stdout}\n${result.stderr}` };
}

/** The lines of the README's deploy block (examples/worker/deploy.sh). */
const deployLines = (dir) =>
  readFileSync(path.join(dir, "deploy.sh"), "utf8")
    .split("\n")
    .filter((line) => line.trim() && !line.startsWith("#"));

test("from the packed package, with no Rust and no network: install, the one-line worker, wrangler deploy --dry-run", async () => {
  const [install, dryRun, ...rest] = deployLines(path.join(root, "examples", "worker"));
  // The install line, with the packed tarball in place of the registry's copy (wrangler is the
  // repository's own, the same exact version: this machine has no registry to spare).
  assert.equal(install, "npm install captaindata-poller wrangler@4.86.0");
  const pinned = JSON.parse(readFileSync(path.join(root, "node_modules", "wrangler", "package.json"), "utf8")).version;
  assert.equal(pinned, "4.86.0");
  const installed = offline("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball]);
  assert.equal(installed.status, 0, installed.output);

  assert.deepEqual(deployLines(path.join(app, EXAMPLE)), [install, dryRun, ...rest], "the package ships the example");
  // The user's files are the package's own examples, copied as the README says.
  mkdirSync(path.join(app, "src"));
  copyFileSync(path.join(app, EXAMPLE, "src", "index.js"), path.join(app, "src", "index.js"));
  copyFileSync(path.join(app, EXAMPLE, "wrangler.toml"), path.join(app, "wrangler.toml"));
  assert.equal(readFileSync(path.join(app, "src", "index.js"), "utf8").trim(), 'export { default, RunTracker, Registry } from "captaindata-poller/worker";');

  assert.equal(dryRun, "npx wrangler deploy --dry-run --outdir dist");
  const bundled = offline(WRANGLER, dryRun.split(" ").slice(2));
  assert.equal(bundled.status, 0, bundled.output);
  assert.match(bundled.output, /--dry-run: exiting now/);
  const files = readdirSync(path.join(app, "dist"));
  assert.ok(files.includes("index.js"), files.join(", "));
  assert.ok(files.some((f) => f.endsWith(".wasm")), `the wasm is a module of its own: ${files.join(", ")}`);
  const shipped = files.filter((f) => f.endsWith(".wasm") || f === "index.js"); // not the source map
  const kib = shipped.reduce((sum, f) => sum + statSync(path.join(app, "dist", f)).size, 0) / 1024;
  console.log(`wrangler dry-run bundle: ${kib.toFixed(0)} KiB (index.js and the .wasm), network ${bundled.isolated ? "namespace with none" : "refused by proxy"}`);

  // The rest of the block: a secret for each one the worker needs, then the deploy.
  assert.deepEqual(rest, [...SECRET_NAMES.map((name) => `npx wrangler secret put ${name}`), "npx wrangler deploy"]);
});

test("the worker examples type-check under strict against the installed package's types (worker.d.ts)", () => {
  copyFileSync(path.join(app, EXAMPLE, "track.js"), path.join(app, "src", "track.js"));
  const tsc = path.join(root, "node_modules", ".bin", "tsc");
  const flags = ["--noEmit", "--strict", "--allowJs", "--checkJs", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom"];
  const checked = spawnSync(tsc, [...flags, "src/index.js", "src/track.js"], { cwd: app, encoding: "utf8" });
  assert.equal(checked.status, 0, checked.stdout + checked.stderr);
  // It checks something: a wrong export name is an error.
  writeFileSync(path.join(app, "src", "wrong.js"), 'export { Tracker } from "captaindata-poller/worker";\n');
  const wrong = spawnSync(tsc, [...flags, "src/wrong.js"], { cwd: app, encoding: "utf8" });
  rmSync(path.join(app, "src", "wrong.js"));
  assert.notEqual(wrong.status, 0);
  assert.match(wrong.stdout, /Tracker/);
});

test("the bundle wrangler wrote runs in workerd: a run tracked through it and its rows served", async () => {
  const dist = path.join(app, "dist");
  assert.ok(existsSync(path.join(dist, "index.js")), "the dry-run bundle (previous test)");
  const w = await startWorker({ deployed: dist, bindings: { POLL_INTERVAL_MS: "0" }, sim: { webhook: null } });
  try {
    const { jobUid } = w.sim.createJob({ rows: 45, durationMs: 0, pageSize: 10 });
    const token = await w.track(jobUid);
    const end = await w.untilDone(jobUid, token);
    assert.equal(end.status, "finished");
    assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(45));
    w.assertOutboundClean();
  } finally {
    await w.close();
  }
});

/**
 * Inside the app: `wrangler dev` started, `GET /health` with the admin token asked until it
 * answers, then wrangler and its workerd stopped (their process group). Written to a file and run
 * with no network when unshare can (loopback brought up inside the namespace).
 */
const DEV_CHECK = `
import { spawn } from "node:child_process";
const [wrangler, port, admin] = process.argv.slice(2);
const dev = spawn(wrangler, ["dev", "--ip", "127.0.0.1", "--port", port, "--show-interactive-dev-session=false"], { detached: true, stdio: "ignore" });
let answer = null;
for (let i = 0; i < 1200 && answer === null; i++) {
  try {
    const res = await fetch("http://127.0.0.1:" + port + "/health", { headers: { authorization: "Bearer " + admin } });
    answer = { status: res.status, body: await res.json() };
  } catch {
    await new Promise((r) => setTimeout(r, 100)); // not listening yet: ask again
  }
}
process.kill(-dev.pid, "SIGKILL");
console.log(JSON.stringify(answer));
`;

test("wrangler dev runs the installed worker with the secrets of .dev.vars (copied from .dev.vars.example)", async () => {
  copyFileSync(path.join(app, EXAMPLE, ".dev.vars.example"), path.join(app, ".dev.vars"));
  const admin = /^ADMIN_TOKEN=(.*)$/m.exec(readFileSync(path.join(app, ".dev.vars"), "utf8"))[1];
  writeFileSync(path.join(app, "dev-check.mjs"), DEV_CHECK);
  const args = [process.execPath, "dev-check.mjs", WRANGLER, "8911", admin].map((a) => `'${a}'`).join(" ");
  const isolated = spawnSync("unshare", ["-n", "--", "ip", "link", "set", "lo", "up"]).status === 0;
  const script = isolated ? `ip link set lo up && exec ${args}` : `exec ${args}`;
  const result = isolated ? offline("sh", ["-c", script]) : spawnSync("sh", ["-c", script], { cwd: app, encoding: "utf8", timeout: 300_000 });
  const answer = JSON.parse(result.stdout.trim().split("\n").pop() || "null");
  // Every secret came from .dev.vars: GET /health finds nothing missing.
  assert.deepEqual(answer, { status: 200, body: { ok: true, problems: [] } }, result.stderr);
});

test(".dev.vars.example lists exactly the secrets the worker needs, with placeholders only", () => {
  const text = readFileSync(path.join(app, EXAMPLE, ".dev.vars.example"), "utf8");
  const entries = text
    .split("\n")
    .filter((line) => line.trim() && !line.startsWith("#"))
    .map((line) => line.split("="));
  assert.deepEqual(entries.map(([name]) => name), SECRET_NAMES);
  assert.ok(entries.every(([, value]) => /^[a-z-]+$/.test(value)), "placeholders, not secrets");
});
