// Server bundles carry the wasm: a server file that imports the package, bundled as SvelteKit's
// and Next.js's production builds bundle their server code (every import inlined into one file,
// written elsewhere, the package's folder out of reach), runs pollStep and a JobPoller against
// the simulator. The Node entry imports the module's bytes as a JS module: nothing is read from
// a path next to it, which a bundle moves (`…/server/pkg/captaindata_poller_bg.wasm: ENOENT`).
// The real production builds: sveltekit-build.test.mjs, nextjs-build.test.mjs.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { build } from "esbuild";
import { root } from "../../scripts/exec.mjs";
import { API_KEY, PROJECT_ID, useSim } from "./sim-fixture.mjs";

const ctx = useSim();
const dir = mkdtempSync(path.join(tmpdir(), "server-bundle-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// What a `+server.ts` endpoint or a route handler does: one pollStep, then a JobPoller.
const SERVER = `import { JobPoller, pollStep } from "captaindata-poller";
const [baseUrl, apiKey, projectId, jobUid] = process.argv.slice(2);
const step = await pollStep({ baseUrl, apiKey, projectId, jobUid });
let rows = 0;
const summary = await new JobPoller({ baseUrl, apiKey, projectId, jobUid, intervalMs: 50, onBatch: (b) => void (rows += b.results.length) }).start();
console.log(JSON.stringify({ step: { done: step.done, rows: step.results.length, error: step.error?.message }, poller: { status: summary.status, rows } }));
`;

test("a bundled server file runs pollStep and a JobPoller with the package's folder out of reach", async () => {
  // The app: its own folder, the package installed in its node_modules.
  const app = path.join(dir, "app");
  mkdirSync(path.join(app, "node_modules"), { recursive: true });
  symlinkSync(root, path.join(app, "node_modules", "captaindata-poller"), "dir");
  writeFileSync(path.join(app, "server.js"), SERVER);
  // Its production build: one file in another folder, as `vite build` / `next build` write it.
  const outfile = path.join(dir, "build", "server", "index.mjs");
  await build({
    entryPoints: [path.join(app, "server.js")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile,
    logLevel: "silent",
  });
  // The app's folder is gone on the server: only the build is deployed.
  rmSync(app, { recursive: true, force: true });
  const { jobUid } = ctx.sim.createJob({ rows: 40, durationMs: 0, pageSize: 1000 });
  const { stdout } = await promisify(execFile)(process.execPath, [outfile, ctx.connection.baseUrl, API_KEY, PROJECT_ID, jobUid], {
    cwd: path.dirname(outfile),
  });
  const result = JSON.parse(stdout);
  assert.deepEqual(result.step, { done: true, rows: 40 });
  assert.deepEqual(result.poller, { status: "finished", rows: 40 });
});
