// Miniflare options for this worker, shared by `npm run worker:dev` and tests/worker: the
// same bindings as wrangler.toml, with the simulator as Captain Data.
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, "..");

/**
 * How workerd loads this package's modules: the package is "type": "module", so its .js files
 * are ES modules, and the .wasm is compiled. For this worker and for the bench's Worker that
 * runs `pollStep` (bench/contestants/step-workerd.mjs).
 */
export const PACKAGE_MODULES = Object.freeze({
  cf: false,
  modules: true,
  modulesRoot: REPO_ROOT,
  modulesRules: [
    { type: "ESModule", include: ["**/*.js"] },
    { type: "CompiledWasm", include: ["**/*.wasm"] },
  ],
  compatibilityDate: "2025-09-01",
});

/** Secrets for local runs only (never use these in a deployment). */
export const LOCAL_SECRETS = Object.freeze({
  CAPTAINDATA_API_KEY: "sim-key",
  CAPTAINDATA_PROJECT_ID: "sim-project",
  WEBHOOK_SECRET: "local-webhook-secret",
  READ_TOKEN_SECRET: "local-read-token-secret",
  ADMIN_TOKEN: "local-admin-token",
});

// workerd's local alarm scheduler warns when an alarm set to "now" runs a few ms late: noise.
const LOCAL_ALARM_NOISE = /NOSENTRY SQLite alarm overdue/;

/** Passes workerd's output through, without the local alarm noise; `onLine` sees each line too. */
function quietStdio(onLine) {
  return (stdout, stderr) => {
    for (const [stream, out] of [[stdout, process.stdout], [stderr, process.stderr]]) {
      createInterface({ input: stream }).on("line", (line) => {
        if (LOCAL_ALARM_NOISE.test(line)) return;
        onLine?.(line);
        out.write(`${line}\n`);
      });
    }
  };
}

/**
 * @param {{ baseUrl: string, bindings?: Record<string, string>, outboundService?: unknown, port?: number,
 *   onLine?: (line: string) => void }} options
 * `baseUrl` is the simulator's `/v3` URL on 127.0.0.1; `onLine` receives the worker's log lines.
 */
export function miniflareOptions({ baseUrl, bindings = {}, outboundService, port, onLine }) {
  return {
    name: "captaindata-poller",
    host: "127.0.0.1",
    port,
    ...PACKAGE_MODULES,
    scriptPath: path.join(here, "src", "index.js"),
    durableObjects: {
      RUNS: { className: "RunTracker", useSQLite: true },
      REGISTRY: { className: "Registry", useSQLite: true },
    },
    bindings: { ...LOCAL_SECRETS, CAPTAINDATA_BASE_URL: baseUrl, ...bindings },
    handleRuntimeStdio: quietStdio(onLine),
    ...(outboundService ? { outboundService } : {}),
  };
}
