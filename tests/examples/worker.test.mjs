// The Worker examples run where they run: the README's cron Worker (examples/cron/cron.js with
// its wrangler.toml) bundled as wrangler bundles it and run in workerd (Miniflare), its cron fired
// tick after tick against the simulator standing in for https://api.captaindata.co, through a
// burst of 5xx and 20 ticks past the run's end: every row stored once, no request after the end.
// And worker/README.md's JobPoller reading a run through the project's worker.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { pollStep } from "captaindata-poller";
import { root } from "../../scripts/exec.mjs";
import { createSim, manualClock } from "../../sim/index.js";
import { V4_SETTING_DEFAULTS } from "../../sim/v4-settings.js";
import { ADMIN, advance, readThroughWorker, startV4Worker } from "../worker/v4-fixture.mjs";
import { startWorker } from "../worker/worker-fixture.mjs";
import { exampleDir, placeExample, runNode } from "./example-fixture.mjs";

const API_KEY = "sk_test_cron_example_T6w1Z8";
const PROJECT_ID = "sim-project";
const MINUTE = 60_000;

/** The few wrangler.toml settings the example uses, read from examples/cron/wrangler.toml. */
function wranglerConfig() {
  const toml = readFileSync(path.join(root, "examples", "cron", "wrangler.toml"), "utf8");
  const value = (key) => new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, "m").exec(toml)?.[1];
  const vars = Object.fromEntries([...toml.slice(toml.indexOf("[vars]")).matchAll(/^(\w+)\s*=\s*"([^"]*)"/gm)].map((m) => [m[1], m[2]]));
  return {
    main: value("main"),
    compatibilityDate: value("compatibility_date"),
    crons: [.../crons\s*=\s*\[([^\]]*)\]/.exec(toml)?.[1].matchAll(/"([^"]+)"/g) ?? []].map((m) => m[1]),
    kv: [...toml.matchAll(/\[\[kv_namespaces\]\]\s*\nbinding\s*=\s*"(\w+)"/g)].map((m) => m[1]),
    compiledWasm: /type = "CompiledWasm"/.test(toml),
    vars,
  };
}

/**
 * Bundles the example as `wrangler deploy` does (the package through its `workerd` export, the
 * .wasm kept as a module of its own) into a folder Miniflare runs.
 */
async function bundleWorker(entry) {
  const dir = mkdtempSync(path.join(tmpdir(), "captaindata-poller-cron-example-"));
  const wasm = [];
  await build({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker"],
    outfile: path.join(dir, "index.js"),
    logLevel: "silent",
    plugins: [
      {
        name: "compiled-wasm",
        setup(b) {
          b.onResolve({ filter: /\.wasm$/ }, (args) => {
            const file = path.resolve(args.resolveDir, args.path);
            wasm.push(file);
            return { path: `./${path.basename(file)}`, external: true };
          });
        },
      },
    ],
  });
  for (const file of wasm) writeFileSync(path.join(dir, path.basename(file)), readFileSync(file));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The simulator answering what the Worker sends to the API's origin; anything else is refused. */
function outboundToSim(sim, seen) {
  return async (request) => {
    const url = new URL(request.url);
    seen.push(request.url);
    if (url.origin !== "https://api.captaindata.co") return new Response("the tests reach only the simulated API", { status: 502 });
    const body = ["GET", "HEAD"].includes(request.method) ? undefined : await request.arrayBuffer();
    return sim.handle(new Request(request.url, { method: request.method, headers: request.headers, body }));
  };
}

test("examples/cron/wrangler.toml: a cron trigger, the KV namespace the Worker uses, the entry", () => {
  const config = wranglerConfig();
  assert.equal(config.main, "cron.js");
  assert.deepEqual(config.crons, ["* * * * *"]);
  assert.deepEqual(config.kv, ["POLLS"]);
  assert.ok(config.compiledWasm);
  const code = readFileSync(path.join(root, "examples", "cron", "cron.js"), "utf8");
  for (const name of [...config.kv, ...Object.keys(config.vars), "CAPTAINDATA_API_KEY", "CAPTAINDATA_PROJECT_ID"]) {
    assert.match(code, new RegExp(`env\\.${name}\\b`), `the Worker reads env.${name}`);
  }
  assert.doesNotMatch(readFileSync(path.join(root, "examples", "cron", "wrangler.toml"), "utf8"), /^CAPTAINDATA_API_KEY\s*=/m, "no secret in the file");
});

test("examples/cron/cron.js in workerd: 2,500 rows over cron ticks with a 5xx burst, stored once; 20 ticks past the end send nothing", async (t) => {
  const config = wranglerConfig();
  const clock = manualClock(Date.now());
  const start = clock.now();
  const sim = createSim({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 9, clock });
  // 2,500 rows on 1000-row pages over 10 minutes; from the 8th request to the run, six 503s in a
  // row: more than the default 5 retries, so one tick ends with a retryable error.
  const { jobUid } = sim.createJob({
    jobUid: config.vars.JOB_UID,
    rows: 2500,
    durationMs: 10 * MINUTE,
    pageSize: 1000,
    faults: { script: [{ kind: "any", nth: 8, respond: 503, count: 6 }] },
  });
  const bundle = await bundleWorker(path.join("examples", "cron", config.main));
  t.after(() => bundle.remove());
  const outbound = [];
  const logs = [];
  const mf = new Miniflare({
    cf: false,
    modules: true,
    modulesRoot: bundle.dir,
    scriptPath: path.join(bundle.dir, "index.js"),
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: config.compatibilityDate,
    kvNamespaces: config.kv,
    bindings: { ...config.vars, CAPTAINDATA_API_KEY: API_KEY, CAPTAINDATA_PROJECT_ID: PROJECT_ID },
    outboundService: outboundToSim(sim, outbound),
    handleRuntimeStdio(stdout, stderr) {
      for (const stream of [stdout, stderr]) createInterface({ input: stream }).on("line", (line) => logs.push(line));
    },
  });
  t.after(() => mf.dispose());
  t.after(() => sim.dispose());
  const worker = await mf.getWorker();
  const kv = await mf.getKVNamespace("POLLS");
  const state = async () => JSON.parse((await kv.get(`state:${jobUid}`)) ?? "null");

  let endedAt = null; // the tick whose state said done
  let requestsAtEnd = null;
  const perTick = [];
  const failedPerTick = [];
  const failed = () => sim.stats(jobUid).log.filter((e) => e.status === 503).length;
  for (let tick = 1; endedAt === null || tick <= endedAt + 20; tick++) {
    assert.ok(tick <= 60, `the run is not over after ${tick - 1} ticks: ${JSON.stringify(await state())}`);
    clock.set(start + tick * MINUTE);
    const before = sim.stats(jobUid).requests.total;
    const failedBefore = failed();
    const result = await worker.scheduled({ cron: config.crons[0], scheduledTime: new Date(clock.now()) });
    assert.equal(result.outcome, "ok", `tick ${tick}`);
    perTick.push(sim.stats(jobUid).requests.total - before);
    failedPerTick.push(failed() - failedBefore);
    const now = await state();
    if (endedAt === null && now?.done) {
      endedAt = tick;
      requestsAtEnd = sim.stats(jobUid).requests.total;
    }
  }
  const stats = sim.stats(jobUid);
  assert.ok(stats.log.filter((e) => e.status === 503).length >= 6, "the burst of 503s happened");
  // The burst outlasts one tick either way: its retries run out (a retryable error, `done`
  // false) or its deadline comes first (the back-off's jitter decides); the next tick goes on
  // from the cursor, which the rows below prove (every row once, in order).
  const gaveUp = logs.some((l) => /(RETRIES_EXHAUSTED|TIMEOUT): .*\(next tick retries\)/.test(l));
  const spanned = failedPerTick.filter((n) => n > 0).length >= 2;
  assert.ok(gaveUp || spanned, `the burst ended a tick: ${failedPerTick} 503s per tick; ${logs.join("\n")}`);
  assert.equal(stats.requests.total, requestsAtEnd, `no request in the 20 ticks after the end (per tick: ${perTick})`);
  assert.ok(perTick.every((n) => n <= 40), `maxRequests holds: ${perTick}`);

  const { keys } = await kv.list({ prefix: `rows:${jobUid}:` });
  const batches = await Promise.all(keys.map(async ({ name }) => ({ offset: Number(name.split(":").at(-1)), rows: JSON.parse(await kv.get(name)) })));
  batches.sort((a, b) => a.offset - b.offset);
  const stored = batches.flatMap((b) => b.rows.map((r) => r.id));
  t.diagnostic(`cron example: ${endedAt} ticks to the end + 20 past it, ${stored.length} rows stored, ${new Set(stored).size} unique, ${stats.requests.total} requests (${perTick.join(" ")} per tick)`);
  assert.equal(new Set(stored).size, stored.length, "no row stored twice");
  assert.deepEqual(stored, Array.from({ length: 2500 }, (_, i) => `row-${i}`), "every row, in order");
  const final = await state();
  assert.deepEqual({ ...final, cursor: typeof final.cursor }, { cursor: "string", stored: 2500, done: true }, "the done marker keeps a cursor");
  // The cursor kept is past the last stored row: a step from it (a later reader of the run)
  // delivers no row again and says the run is over.
  const after = await pollStep({ jobUid, apiKey: API_KEY, projectId: PROJECT_ID, cursor: final.cursor, fetch: (url, init) => sim.handle(new Request(url, init)) });
  assert.deepEqual({ rows: after.results.length, done: after.done, status: after.status, error: after.error?.code }, { rows: 0, done: true, status: "finished", error: undefined });
  assert.ok(outbound.every((u) => u.startsWith("https://api.captaindata.co/v3/") && !u.includes(API_KEY)), "only the API, the key never in a URL");
});

test("worker/README.md's JobPoller (examples/proxy/read-through-worker.js) reads a tracked run through the worker", async (t) => {
  const w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0" }, sim: { webhook: null } });
  t.after(() => w.close());
  const { jobUid } = w.sim.createJob({ rows: 60, durationMs: 0, pageSize: 25 });
  const token = await w.track(jobUid);
  await w.untilDone(jobUid, token);
  const work = exampleDir("read-through-worker");
  t.after(() => work.remove());
  await placeExample("examples/proxy/read-through-worker.js", work.dir);
  // A page would call showRun; this one prints what render() received.
  const driver = path.join(work.dir, "driver.mjs");
  writeFileSync(
    driver,
    `import { showRun } from "./read-through-worker.js";\n` +
      `const [jobUid, token] = process.argv.slice(2);\n` +
      `const summary = await showRun(jobUid, token, (rows) => console.log(JSON.stringify(rows.map((r) => r.id))));\n` +
      `console.log(summary.status, summary.totalResults);\n`,
  );
  const out = await runNode(driver, { args: [jobUid, token], cwd: work.dir, origins: { "https://captaindata-poller.your-subdomain.workers.dev": w.origin } });
  assert.equal(out.code, 0, out.tail);
  const lines = out.stdout.trim().split("\n");
  assert.equal(lines.at(-1), "finished 60");
  assert.deepEqual(lines.slice(0, -1).flatMap((l) => JSON.parse(l)), Array.from({ length: 60 }, (_, i) => `row-${i}`));
});

test("worker/README.md's v4 launch (examples/worker/v4-launch.json, action linkedin-extract-people) starts a run on the worker in front of the simulator, every row of each input once", async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  // The simulator as `npm run worker:dev` and `npm run sim` shape it: rows per input, pages of 10.
  const w = await startV4Worker({ clock, sim: { webhook: null, v4Defaults: { ...V4_SETTING_DEFAULTS, rowsPerInput: 30 } } });
  t.after(() => w.close());
  const body = readFileSync(path.join(root, "examples", "worker", "v4-launch.json"));
  const inputs = JSON.parse(readFileSync(path.join(root, "examples", "worker", "v4-inputs.json"), "utf8"));
  assert.deepEqual(inputs, JSON.parse(body.toString("utf8")).inputs, "the CLI's --inputs file holds the launch body's inputs");
  // The body's bytes as curl's --data @file sends them.
  const res = await w.call("/v4/actions/linkedin-extract-people/async", { method: "POST", headers: ADMIN, body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const { run_uid: runUid, read_token: token } = res.body;
  assert.equal(w.sim.v4.run(runUid).action, "linkedin-extract-people");
  await advance(w, clock, V4_SETTING_DEFAULTS.durationMs + 1000);
  const { rows, summary } = await readThroughWorker(w, runUid, token, { intervalMs: 20, maxDurationMs: 30_000 });
  assert.equal(summary.status, "finished");
  assert.deepEqual(rows.map((r) => r.id), Array.from({ length: 30 * inputs.length }, (_, i) => `row-${i}`));
});
