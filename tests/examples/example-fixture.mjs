// Shared by the example suites: an example file runs as a user runs it (its own process, the
// package imported by name), its requests sent to the simulator on 127.0.0.1 in place of the
// real API or proxy it names (redirect-fetch.mjs), in a temporary folder of its own.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { transform } from "esbuild";
import { readFile, writeFile } from "node:fs/promises";
import { root } from "../../scripts/exec.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const API_KEY = "sk_test_examples_V3c9L2pQ5151";
export const PROJECT_ID = "sim-project";
/** The origins the examples name, which the tests answer from the simulator. */
export const API_ORIGIN = "https://api.captaindata.co";
export const PROXY_ORIGIN = "https://your-proxy.example.com";
/** The jobUid the examples show as a placeholder: the tests create the run under that uid. */
export const PLACEHOLDER_JOB = "4c3f7d1e-9b2a-4e51-8d07-6a1f2c3b4d5e";

/**
 * A folder for an example that imports the package by name: `node_modules/captaindata-poller`
 * is this checkout (its package.json `exports`, `dist/` and `pkg/`), as after `npm install`.
 */
export function exampleDir(name) {
  const dir = mkdtempSync(path.join(tmpdir(), `captaindata-poller-example-${name}-`));
  mkdirSync(path.join(dir, "node_modules"));
  symlinkSync(root, path.join(dir, "node_modules", "captaindata-poller"), "dir");
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Copies `examples/<file>` into `dir` (a .ts file compiled to .mjs by esbuild, as `tsx` or a
 * bundler would run it) and returns the path to run.
 */
export async function placeExample(file, dir) {
  const source = path.join(root, file);
  const base = path.basename(file).replace(/\.ts$/, ".mjs");
  const target = path.join(dir, base);
  if (file.endsWith(".ts")) {
    const { code } = await transform(await readFile(source, "utf8"), { loader: "ts", format: "esm", target: "node20" });
    await writeFile(target, code);
  } else cpSync(source, target);
  return target;
}

/**
 * Runs `node <script> ...args` in `cwd` with the simulator standing in for `origins`' keys.
 * Resolves with `{ code, stdout, stderr }` once the process exits.
 */
export function runNode(script, { args = [], cwd, env = {}, origins = {} }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", path.join(HERE, "redirect-fetch.mjs"), script, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, EXAMPLE_ORIGINS: JSON.stringify(origins) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    // `stderr` in an assertion message: its last lines (a stack names minified code at length).
    child.on("close", (code) => resolve({ code, stdout, stderr, tail: stderr.split("\n").slice(-6).join("\n").slice(-1500) }));
  });
}
