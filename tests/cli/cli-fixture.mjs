// Shared by the CLI suites: the simulator over HTTP on 127.0.0.1, the real CLI spawned as a
// child process, and what a person at a terminal notices (exit code, stdout, stderr, files).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { startSimServer } from "../../sim/server.mjs";
import { until } from "../support/until.mjs";

export const CLI = path.join(root, "bin", "captaindata-poller.mjs");
/** A distinctive key: no output, message or file may ever contain it. */
export const API_KEY = "sk_test_cli_7Hq2Wz9PpL0xKEY";
export const PROJECT_ID = "sim-project-cli";

/** One simulator and one scratch directory per test file; every text the CLI produced is kept for the key audit. */
export function useCliSim(options = {}) {
  const ctx = { texts: [], children: new Set() };
  before(async () => {
    ctx.server = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 19, ...options });
    ctx.sim = ctx.server.sim;
    ctx.baseUrl = ctx.server.url;
    ctx.dir = mkdtempSync(path.join(tmpdir(), "cdp-cli-"));
  });
  after(async () => {
    // A CLI still running after its test (a failed one) must not keep the suite alive.
    for (const child of ctx.children) child.kill("SIGKILL");
    // The key appears nowhere: not in any stdout, stderr or file the CLI wrote.
    for (const entry of readdirSync(ctx.dir, { withFileTypes: true })) {
      if (entry.isFile()) ctx.texts.push({ where: entry.name, text: readFileSync(path.join(ctx.dir, entry.name), "utf8") });
    }
    for (const { where, text } of ctx.texts) assert.ok(!text.includes(API_KEY), `the API key appears in ${where}`);
    await ctx.server?.close();
    rmSync(ctx.dir, { recursive: true, force: true });
  });
  return ctx;
}

/** The environment of a user who exported the key and project (and nothing that changes output). */
export function cliEnv(extra = {}) {
  return { PATH: process.env.PATH, HOME: process.env.HOME, CAPTAINDATA_API_KEY: API_KEY, CAPTAINDATA_PROJECT_ID: PROJECT_ID, ...extra };
}

/**
 * Starts the CLI; `stdout`/`stderr` fill as it writes (`stallStdout`: stdout stops being read after a first chunk); `exit` resolves with `{ code, signal }`.
 * @param {ReturnType<typeof useCliSim>} ctx
 */
export function spawnCli(ctx, args, { env = cliEnv(), cwd = ctx.dir, input, stallStdout = false, command } = {}) {
  // `command`: an installed bin (run as is) instead of `node bin/captaindata-poller.mjs`.
  const [file, argv] = command ? [command, args] : [process.execPath, [CLI, ...args]];
  const child = spawn(file, argv, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const out = { child, stdout: "", stderr: "" };
  ctx.children.add(child);
  child.on("exit", () => ctx.children.delete(child));
  let stalled = false;
  child.stdout.setEncoding("utf8").on("data", (s) => {
    out.stdout += s;
    // A reader that stalls after its first chunk: the pipe fills and a large write waits.
    if (stallStdout && !stalled) child.stdout.pause();
    stalled = true;
  });
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr += s));
  child.stdin.end(input);
  // 'close' waits for stdout to end: a stalled reader must drain what is left once the CLI exited.
  child.on("exit", () => child.stdout.resume());
  out.exit = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal }))).then((result) => {
    ctx.texts.push({ where: `stdout of ${args.join(" ")}`, text: out.stdout }, { where: `stderr of ${args.join(" ")}`, text: out.stderr });
    return result;
  });
  return out;
}

/** Runs the CLI to its end: `{ code, stdout, stderr }`. */
export async function runCli(ctx, args, options) {
  const out = spawnCli(ctx, args, options);
  const { code } = await out.exit;
  return { code, stdout: out.stdout, stderr: out.stderr };
}

/**
 * Waits for `condition()` to be truthy (tests/support/until.mjs): what a process wrote can only be
 * asked, so it is asked every 20 ms; fails after `timeoutMs`, naming `what`.
 */
export function waitFor(condition, what, timeoutMs = 20000) {
  return until(condition, { everyMs: 20, timeoutMs, what });
}

/** `["row-<from>", …]` */
export const rowIds = (n, from = 0) => Array.from({ length: n }, (_, i) => `row-${from + i}`);

/** The ids of NDJSON text's rows, in order. */
export const ndjsonIds = (text) => text.split("\n").filter(Boolean).map((line) => JSON.parse(line).id);

/** A file of the scratch directory as text ("" when it does not exist yet). */
export function readScratch(ctx, name) {
  try {
    return readFileSync(path.join(ctx.dir, name), "utf8");
  } catch {
    return "";
  }
}

/** Connection flags for the simulator, with a fast cadence (allowed on loopback). */
export const simFlags = (ctx, interval = "200ms") => ["--base-url", ctx.baseUrl, "--interval", interval];

/** Control sequences of any kind (colours, cursor moves, line erasing). */
export const ESCAPE = /\x1b/;
