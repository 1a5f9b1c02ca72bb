// `npm run worker:dev` as the demo suites start it: the package.json script on free ports.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { root } from "../../scripts/exec.mjs";
import { startDemoServer } from "../../scripts/start.mjs";
import { launchBrowser } from "./browser-fixture.mjs";
import { freePort } from "../support/free-port.mjs";

/** How long worker:dev may take to bundle the worker and start: a bound for a broken start only. */
const START_TIMEOUT_MS = 120_000;

/** Starts the `worker:dev` script of package.json; resolves once it printed its last line. */
export async function startWorkerDev(env) {
  const script = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts["worker:dev"];
  const [command, ...args] = script.split(" ");
  assert.equal(command, "node", `worker:dev runs ${script}`);
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let timer;
  await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (output.includes("Ctrl-C stops both.")) resolve();
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.once("exit", (code) => reject(new Error(`worker:dev exited with ${code}:\n${output}`)));
    timer = setTimeout(() => {
      child.kill("SIGTERM");
      reject(new Error(`worker:dev did not start within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
  }).finally(() => clearTimeout(timer));
  return {
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}

/**
 * The demo server (`npm start`), Chromium and worker:dev on free ports, the worker allowing the
 * demo's origin; `env` adds worker:dev settings. `stop()` ends all three.
 */
export async function startDemoWithWorker(env = {}) {
  const [demo, browser] = await Promise.all([startDemoServer({ port: 0 }), launchBrowser()]);
  const [workerPort, simPort] = [await freePort(), await freePort()];
  const workerDev = await startWorkerDev({
    WORKER_PORT: String(workerPort),
    SIM_PORT: String(simPort),
    ALLOWED_ORIGINS: new URL(demo.url).origin,
    ...env,
  });
  return {
    demo,
    browser,
    workerDev,
    workerOrigin: `http://127.0.0.1:${workerPort}`,
    simOrigin: `http://127.0.0.1:${simPort}`,
    stop: async () => {
      await workerDev.stop();
      await browser.close();
      await demo.close();
    },
  };
}
