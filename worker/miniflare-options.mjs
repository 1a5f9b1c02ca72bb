// Miniflare options for this worker, shared by `npm run worker:dev` and tests/worker: the
// same bindings as wrangler.toml, with the simulator as Captain Data, and the worker bundled the
// way `wrangler deploy` bundles a user's worker (the package imported by its name).
import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

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
 * What wrangler does to a worker before it deploys it: one ES module bundled with esbuild under
 * the conditions wrangler uses (so `"captaindata-poller"` resolves through package.json
 * `exports` to the workerd entry, as in a user's node_modules), and every imported `.wasm` kept
 * as a module of its own, compiled by workerd (wrangler's default `CompiledWasm` rule).
 * @returns {Promise<{ type: string, path: string, contents: Uint8Array | string }[]>}
 */
async function bundled() {
  const wasm = [];
  const keepWasm = {
    name: "wasm-modules",
    setup(b) {
      b.onResolve({ filter: /\.wasm$/ }, ({ path: spec, resolveDir }) => {
        const file = path.resolve(resolveDir, spec);
        const name = path.basename(file);
        if (!wasm.some((m) => m.file === file)) wasm.push({ file, name });
        return { path: `./${name}`, external: true };
      });
    },
  };
  const result = await build({
    entryPoints: [path.join(here, "src", "index.js")],
    bundle: true,
    write: false,
    format: "esm",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*"],
    plugins: [keepWasm],
    logLevel: "silent",
  });
  const dir = path.join(here, "bundle");
  return [
    { type: "ESModule", path: path.join(dir, "index.js"), contents: result.outputFiles[0].text },
    ...wasm.map(({ file, name }) => ({ type: "CompiledWasm", path: path.join(dir, name), contents: readFileSync(file) })),
  ];
}

// Bundled once per process: every worker a test suite starts runs the same code.
let bundle = null;

/** The worker's modules as wrangler would deploy them (bundled once per process). */
export function workerModules() {
  bundle ??= bundled();
  return bundle;
}

/**
 * @param {{ baseUrl: string, bindings?: Record<string, string>, outboundService?: unknown, port?: number,
 *   onLine?: (line: string) => void }} options
 * `baseUrl` is the simulator's `/v3` URL on 127.0.0.1; `onLine` receives the worker's log lines.
 */
export async function miniflareOptions({ baseUrl, bindings = {}, outboundService, port, onLine }) {
  return {
    name: "captaindata-poller",
    host: "127.0.0.1",
    port,
    cf: false,
    compatibilityDate: PACKAGE_MODULES.compatibilityDate,
    modulesRoot: here,
    modules: await workerModules(),
    durableObjects: {
      RUNS: { className: "RunTracker", useSQLite: true },
      REGISTRY: { className: "Registry", useSQLite: true },
    },
    bindings: { ...LOCAL_SECRETS, CAPTAINDATA_BASE_URL: baseUrl, ...bindings },
    handleRuntimeStdio: quietStdio(onLine),
    ...(outboundService ? { outboundService } : {}),
  };
}
