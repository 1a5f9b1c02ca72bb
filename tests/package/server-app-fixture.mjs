// Shared by the production-build suites (SvelteKit, Next.js): an app of tests/package/apps/<name>
// that installed the packed package as a user's app does (`npm install` of the tarball: a copy in
// its node_modules, listed in its dependencies); its build run as the framework's CLI runs it; its
// server started on 127.0.0.1 and asked over HTTP. The app lives in test-results/ and finds its
// framework in this checkout's node_modules, as an app of a workspace finds the workspace's: a
// symlink to it would not do, Turbopack compiles no file outside the app's workspace root.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { until } from "../support/until.mjs";
import { API_KEY, PROJECT_ID, rowIds } from "./sim-fixture.mjs";
import { freePort } from "../support/free-port.mjs";

const APPS = path.join(path.dirname(fileURLToPath(import.meta.url)), "apps");

/** The environment an app's server reads its Captain Data connection from: the simulator's. */
export const connectionEnv = (connection) => ({
  CAPTAINDATA_BASE_URL: connection.baseUrl,
  CAPTAINDATA_API_KEY: API_KEY,
  CAPTAINDATA_PROJECT_ID: PROJECT_ID,
});

/**
 * tests/package/apps/<name> copied to a new folder of test-results/, with the package installed
 * from its tarball (`npm pack` of the dist/ and pkg/ already built). `remove()` deletes it.
 */
export function createApp(name) {
  mkdirSync(path.join(root, "test-results"), { recursive: true });
  const dir = mkdtempSync(path.join(root, "test-results", `${name}-app-`));
  cpSync(path.join(APPS, name), dir, { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: `${name}-app`, private: true, type: "module" }, null, 2));
  const npm = (args, cwd) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  // --ignore-scripts: prepack would rebuild what the build stage built.
  const tarball = npm(["pack", "--ignore-scripts", "--pack-destination", dir], root).trim().split("\n").at(-1);
  npm(["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", path.join(dir, tarball)], dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A child process with its output kept (stdout and stderr together), in a process group of its own. */
function start(args, { cwd, env }) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const proc = { child, output: "", exit: null };
  const keep = (chunk) => (proc.output += chunk);
  child.stdout.setEncoding("utf8").on("data", keep);
  child.stderr.setEncoding("utf8").on("data", keep);
  proc.exited = new Promise((resolve) => child.on("close", (code, signal) => resolve((proc.exit = { code, signal }))));
  // The whole group: a framework's CLI may start processes of its own (build workers).
  proc.kill = (signal) => {
    if (proc.exit) return;
    try {
      process.kill(-child.pid, signal);
    } catch (error) {
      if (error.code !== "ESRCH") throw error; // gone between its exit and our 'close' event
    }
  };
  return proc;
}

/** Runs a build (`node <cli> build`) in the app; resolves once it exited 0, else fails with its output. */
export async function build(args, { cwd, env = {}, timeoutMs = 240_000 }) {
  const proc = start(args, { cwd, env });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  assert.equal(code, 0, `${args.join(" ")} exited ${code ?? signal}${signal === "SIGKILL" ? ` (killed after ${timeoutMs} ms)` : ""}:\n${proc.output}`);
  return proc.output;
}

/**
 * Starts a built server, `serve(port)` giving its `{ args, env }`, and resolves once its output
 * matches `ready` (the line it prints when it listens). Fails with its output if it exits first
 * or says nothing within `timeoutMs`. `getJson(path)` asks it; `close()` ends its process group.
 */
export async function startServer(serve, { cwd, ready, timeoutMs = 60_000 }) {
  const port = await freePort();
  const { args, env } = serve(port);
  const proc = start(args, { cwd, env });
  const close = async () => {
    proc.kill("SIGTERM");
    const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await proc.exited;
    clearTimeout(killer);
  };
  const onOutput = (recheck) => {
    proc.child.stdout.on("data", recheck);
    proc.child.stderr.on("data", recheck);
    proc.child.on("close", recheck);
    return () => {
      proc.child.stdout.off("data", recheck);
      proc.child.stderr.off("data", recheck);
      proc.child.off("close", recheck);
    };
  };
  try {
    await until(
      () => {
        if (proc.exit) throw new Error(`${args.join(" ")} exited ${proc.exit.code ?? proc.exit.signal} before listening:\n${proc.output}`);
        return ready.test(proc.output);
      },
      { on: [onOutput], timeoutMs, what: `${args.join(" ")} to print ${ready}`, detail: () => proc.output },
    );
  } catch (error) {
    await close();
    throw error;
  }
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    output: () => proc.output,
    close,
    /** GET `pathname` as JSON; anything but a 200 fails with the body and what the server printed. */
    async getJson(pathname) {
      const url = new URL(pathname, origin);
      const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      assert.equal(res.status, 200, `GET ${url.pathname}${url.search}: ${res.status} ${text}\nthe server printed:\n${proc.output}`);
      return JSON.parse(text);
    },
  };
}

/**
 * A run read through `server`'s `GET /api/step?job=…&cursor=…` (a route that answers one pollStep
 * round: `{ ids, cursor, status, done, error }`) round after round, passing back the cursor each
 * time, while the simulator's clock moves: the API has 40 % of the rows, then all of them and the
 * run is over, then one round more past the end. Asserts what the caller of the route notices:
 * every row once and in order, `done` false while the run is going, true once it is over (and
 * after it, with no row again), no error. `ctx` holds the simulator and its manual clock.
 */
export async function stepThroughRun(ctx, server) {
  const ROWS = 2500;
  const DURATION = 10_000;
  const started = ctx.clock.now();
  const { jobUid } = ctx.sim.createJob({ rows: ROWS, durationMs: DURATION, pageSize: 1000 });
  const ids = [];
  const rounds = [];
  const step = async () => {
    const cursor = rounds.at(-1)?.cursor;
    const query = new URLSearchParams({ job: jobUid, ...(cursor && { cursor }) });
    const round = await server.getJson(`/api/step?${query}`);
    assert.equal(round.error, undefined, `a round failed: ${JSON.stringify(round.error)}`);
    assert.equal(typeof round.cursor, "string");
    ids.push(...round.ids);
    rounds.push(round);
    return round;
  };
  // Rounds until `enough()`: a bound on their number, not on time (a round reads what is there).
  const stepUntil = async (enough, what) => {
    const from = rounds.length;
    while (!enough() && rounds.length - from < 10) await step();
    assert.ok(enough(), `${what} after 10 rounds: ${ids.length} rows, the last round ${JSON.stringify(rounds.at(-1))}`);
    return rounds.slice(from);
  };

  ctx.clock.set(started + 0.4 * DURATION);
  const midRun = await stepUntil(() => ids.length >= 0.4 * ROWS, "40 % of the rows");
  midRun.push(await step()); // nothing new yet: the run is still going
  assert.deepEqual(midRun.at(-1).ids, []);
  for (const round of midRun) {
    assert.equal(round.status, "running");
    assert.equal(round.done, false, "done while the run is going");
  }
  assert.deepEqual(ids, rowIds(0.4 * ROWS), "every row the API has, once, in order");

  ctx.clock.set(started + DURATION);
  const ending = await stepUntil(() => rounds.at(-1).done, "done once the run is over");
  assert.deepEqual(ids, rowIds(ROWS), "every row once, in order");
  assert.equal(ending.at(-1).status, "finished");
  // A tick after the end, from the kept cursor (a cron that goes on): no row again, still done.
  const after = await step();
  assert.deepEqual([after.ids, after.done, after.status], [[], true, "finished"]);
  return { jobUid, rounds };
}

/**
 * One production-build suite's app, for its whole file: before the tests, tests/package/apps/<name>
 * copied (then `prepare(dir)`), built by `buildArgs`, and served by `serve(port)` (`{ args, env }`)
 * with `env` and the simulator's connection (`ctx.connection`) in its environment until it prints
 * `ready`; after them, the server closed and the app removed. Returns `{ app, server }`, filled by
 * the time the tests run.
 */
export function useBuiltApp(name, ctx, { prepare = () => {}, buildArgs, env = {}, serve, ready }) {
  const built = { app: null, server: null };
  before(async () => {
    built.app = createApp(name);
    prepare(built.app.dir);
    await build(buildArgs, { cwd: built.app.dir, env });
    const connection = connectionEnv(ctx.connection);
    built.server = await startServer(
      (port) => {
        const served = serve(port);
        return { args: served.args, env: { ...env, ...served.env, ...connection } };
      },
      { cwd: built.app.dir, ready },
    );
  });
  after(async () => {
    await built.server?.close();
    built.app?.remove();
  });
  return built;
}
