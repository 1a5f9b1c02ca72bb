// Running external commands for the build scripts: every failure names the step that failed.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

/** Repository root (the parent of scripts/). */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A failed step; `step` is the human name printed by the callers. */
export class StepError extends Error {
  constructor(step, message) {
    super(`${step}: ${message}`);
    this.name = "StepError";
    this.step = step;
  }
}

/** Quote an argument only when it needs it, so printed commands can be pasted into a shell. */
const quote = (arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`);

/** The command line as it would be typed, with the extra environment in front. */
export function describe(cmd, args, env = {}) {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${quote(String(v))}`);
  return [...vars, cmd, ...args.map(quote)].join(" ");
}

/**
 * Run a command with inherited stdio; rejects with a StepError naming `step` when it fails.
 * Output is streamed (not buffered) so long stages show progress in CI logs; with
 * `capture` stdout is collected instead and resolved as a string.
 */
export function run(step, cmd, args, { env = {}, cwd = root, capture = false } = {}) {
  console.log(`$ ${describe(cmd, args, env)}`);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", capture ? "pipe" : "inherit", "inherit"],
    });
    let stdout = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.on("error", (err) => reject(new StepError(step, `cannot start ${cmd}: ${err.message}`)));
    child.on("close", (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new StepError(step, `\`${describe(cmd, args)}\` ${signal ? `killed by ${signal}` : `exited with ${code}`}`));
    });
  });
}

/** Run a short command and return its stdout, or null when it is missing or fails. */
export function probe(cmd, args, { cwd = root } = {}) {
  const out = spawnSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return out.status === 0 ? out.stdout : null;
}

/** True when the module at `url` is the script node was started with. */
export const isMain = (url) => process.argv[1] !== undefined && url === pathToFileURL(process.argv[1]).href;

/** Run `main` as a CLI: print a clear failure line and exit 1 instead of a stack trace. */
export function cli(main) {
  main().catch((err) => {
    console.error(`\nFAILED ${err instanceof StepError ? err.message : err?.stack ?? err}`);
    process.exit(1);
  });
}
