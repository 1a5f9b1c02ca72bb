// `npm test`: set up, then every test suite in order; stops at the first failing stage and
// prints a summary with times. `node scripts/test.mjs size types` runs only the named stages.
// `node scripts/test.mjs --repeat 5 worker demo` runs them 5 times over (a flakiness check: it
// goes on after a failure and prints how many passes each stage failed).
// Later issues (demo in Playwright, worker in Miniflare, bench smoke) add entries to `stages`.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { StepError, cli, isMain, root, run } from "./exec.mjs";
import { build } from "./build.mjs";
import { CHROMEDRIVER, setup } from "./setup.mjs";
import { checkSize } from "./size.mjs";

/** Files in `dir` (relative to the root) whose names match `pattern`, sorted. */
function filesIn(dir, pattern) {
  const abs = path.join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs)
    .filter((name) => pattern.test(name))
    .sort()
    .map((name) => path.join(dir, name));
}

const wasmTestTargets = () => filesIn("tests", /^wasm_.*\.rs$/).map((f) => path.basename(f, ".rs"));
const nodeTestFiles = () => [...filesIn("tests", /\.test\.mjs$/), ...filesIn(path.join("tests", "package"), /\.test\.mjs$/), ...filesIn(path.join("tests", "cli"), /\.test\.mjs$/)];
const workerTestFiles = () => filesIn(path.join("tests", "worker"), /\.test\.mjs$/);
const leakTestFiles = () => filesIn(path.join("tests", "leaks"), /\.test\.mjs$/);
const demoTestFiles = () => filesIn(path.join("tests", "demo"), /\.test\.mjs$/);
const exampleTestFiles = () => filesIn(path.join("tests", "examples"), /\.test\.mjs$/);
const bin = (name) => path.join(root, "node_modules", ".bin", name);

/** wasm-bindgen-test in one environment; the runner's env vars pick it per pass. */
function wasmTests(env) {
  const args = ["test", "--target", "wasm32-unknown-unknown", ...wasmTestTargets().flatMap((t) => ["--test", t])];
  return run("wasm tests", "cargo", args, {
    env: { CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER: "wasm-bindgen-test-runner", ...env },
  });
}

const noWasmTests = () => (wasmTestTargets().length === 0 ? "no tests/wasm_*.rs yet" : null);

/**
 * The pipeline. `skip` returns a reason (printed, and shown in the summary) when a stage's
 * inputs do not exist yet; a stage whose inputs exist always runs and must pass.
 */
export const stages = [
  { id: "setup", name: "setup", run: setup },
  // --show-output prints what passing tests wrote, e.g. the property test's case count.
  // PROPERTY_CASES: fault plans of the engine's property test (it prints `property: N fault plans, 0 violations`).
  {
    id: "cargo-test",
    name: "cargo test (native)",
    run: () => run("cargo test", "cargo", ["test", "--", "--show-output"], { env: { PROPERTY_CASES: "10000" } }),
  },
  { id: "build", name: "build (npm run build)", run: build },
  { id: "size", name: "size check", run: checkSize },
  {
    id: "wasm-node",
    name: "wasm tests in Node",
    skip: noWasmTests,
    run: () => wasmTests({ WASM_BINDGEN_TEST_ONLY_NODE: "1" }),
  },
  {
    id: "wasm-chromium",
    name: "wasm tests in headless Chromium",
    skip: noWasmTests,
    run: () => wasmTests({ WASM_BINDGEN_USE_BROWSER: "1", WASM_BINDGEN_TEST_ONLY_WEB: "1", CHROMEDRIVER }),
  },
  {
    id: "types",
    name: "types (tsc --noEmit)",
    skip: () => (existsSync(path.join(root, "index.d.ts")) ? null : "index.d.ts not written yet"),
    run: () => run("types", bin("tsc"), ["--noEmit", "-p", "tests/types"]),
  },
  {
    id: "examples",
    name: "README examples (sync, strict types, runs)",
    skip: () => (exampleTestFiles().length === 0 ? "no tests/examples yet" : null),
    // The blocks match examples/ first (a second's check), then each example is type-checked and
    // run; one file at a time: the type checkers, workerd and Chromium each take a core.
    run: async () => {
      await run("examples in sync", process.execPath, [path.join(root, "scripts", "examples.mjs"), "--check"]);
      await run("example tests", process.execPath, ["--test", "--test-concurrency=1", ...exampleTestFiles()]);
    },
  },
  {
    id: "node-test",
    name: "node:test suites",
    skip: () => (nodeTestFiles().length === 0 ? "no tests/*.test.mjs yet" : null),
    // Two cores: two test files at a time keeps the simulator servers responsive.
    run: () => run("node:test", process.execPath, ["--test", "--test-concurrency=2", ...nodeTestFiles()]),
  },
  {
    id: "chaos",
    name: "chaos (200 random runs)",
    // A fresh seed each time, printed with any failing run so `npm run chaos -- --seed` replays it.
    run: () => run("chaos", process.execPath, [path.join(root, "scripts", "chaos.mjs"), "--runs", "200"]),
  },
  {
    id: "leaks",
    name: "leaks (cycles, aborts, 6 h clock)",
    // Alone: it measures the heap and sets thousands of timers; other suites' timing would suffer.
    skip: () => (leakTestFiles().length === 0 ? "no tests/leaks yet" : null),
    run: () => run("leaks", process.execPath, ["--test", "--test-concurrency=1", ...leakTestFiles()]),
  },
  {
    id: "worker",
    name: "worker in Miniflare (workerd)",
    skip: () => (workerTestFiles().length === 0 ? "no tests/worker yet" : null),
    run: () => run("worker tests", process.execPath, ["--test", "--test-concurrency=2", ...workerTestFiles()]),
  },
  {
    id: "demo",
    name: "demo in Chromium (Playwright) + Vite",
    skip: () => (demoTestFiles().length === 0 ? "no tests/demo yet" : null),
    // One browser suite at a time: each launches Chromium, and there are two cores.
    run: () => run("demo tests", process.execPath, ["--test", "--test-concurrency=1", ...demoTestFiles()]),
  },
];

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function printSummary(results) {
  console.log("\nnpm test summary:");
  for (const r of results) {
    const time = r.ms === undefined ? "" : seconds(r.ms);
    console.log(`  ${r.status.padEnd(8)} ${r.name.padEnd(34)} ${time.padStart(8)}${r.note ? `  (${r.note})` : ""}`);
  }
}

/** Run the selected stages (all by default) in pipeline order; throw on the first failure. */
export async function test(ids = []) {
  const selected = select(ids);
  const results = selected.map((s) => ({ name: s.name, status: "not run" }));
  const started = Date.now();
  try {
    for (const [i, stage] of selected.entries()) {
      const reason = stage.skip?.();
      if (reason) {
        console.log(`\n=== ${stage.name}: SKIPPED (${reason})`);
        Object.assign(results[i], { status: "skipped", note: reason });
        continue;
      }
      console.log(`\n=== ${stage.name}`);
      const t0 = Date.now();
      try {
        await stage.run();
        Object.assign(results[i], { status: "ok", ms: Date.now() - t0 });
      } catch (err) {
        Object.assign(results[i], { status: "FAILED", ms: Date.now() - t0 });
        throw new StepError(`stage "${stage.name}"`, err instanceof StepError ? err.message : String(err?.stack ?? err));
      }
    }
  } finally {
    printSummary(results);
    console.log(`  total ${seconds(Date.now() - started)}`);
  }
}

/** The selected stages, checked against the pipeline; all of them when `ids` is empty. */
function select(ids) {
  const unknown = ids.filter((id) => !stages.some((s) => s.id === id));
  if (unknown.length > 0) {
    throw new StepError("npm test", `unknown stage ${unknown.join(", ")}; stages: ${stages.map((s) => s.id).join(", ")}`);
  }
  return ids.length === 0 ? stages : stages.filter((s) => ids.includes(s.id));
}

/**
 * Runs the selected stages `times` times over. Unlike `test()` it goes on after a failure (a
 * flaky stage must not hide the others); it throws at the end when any pass of any stage failed.
 * Setup and build stages are run once, on the first pass, when selected.
 */
export async function repeat(times, ids = []) {
  const selected = select(ids);
  const failures = new Map(selected.map((s) => [s.id, { runs: 0, failed: 0, ms: 0 }]));
  const once = new Set(["setup", "build"]);
  const started = Date.now();
  for (let pass = 1; pass <= times; pass++) {
    for (const stage of selected) {
      if (pass > 1 && once.has(stage.id)) continue;
      const reason = stage.skip?.();
      if (reason) continue;
      console.log(`\n=== pass ${pass}/${times}: ${stage.name}`);
      const count = failures.get(stage.id);
      const t0 = Date.now();
      try {
        await stage.run();
      } catch (err) {
        count.failed += 1;
        console.log(`=== pass ${pass}/${times}: ${stage.name} FAILED: ${err instanceof StepError ? err.message : String(err?.stack ?? err)}`);
      }
      count.runs += 1;
      count.ms += Date.now() - t0;
    }
  }
  console.log(`\nrepeat summary (${times} passes, ${seconds(Date.now() - started)}):`);
  for (const stage of selected) {
    const { runs, failed, ms } = failures.get(stage.id);
    const note = runs === 0 ? "skipped" : `${failed} of ${runs} failed, ${seconds(ms / runs)} a pass`;
    console.log(`  ${(failed > 0 ? "FLAKY" : runs === 0 ? "-" : "ok").padEnd(6)} ${stage.name.padEnd(34)} ${note}`);
  }
  const failed = [...failures.values()].reduce((sum, f) => sum + f.failed, 0);
  if (failed > 0) throw new StepError("npm test --repeat", `${failed} failed stage runs in ${times} passes`);
}

/** `[--repeat N] [stage ids…]` */
function parseArgs(argv) {
  const at = argv.indexOf("--repeat");
  if (at === -1) return { times: null, ids: argv };
  const times = Number(argv[at + 1]);
  if (!Number.isInteger(times) || times < 1) throw new StepError("npm test", "--repeat needs a whole number of passes ≥ 1, e.g. --repeat 5");
  return { times, ids: [...argv.slice(0, at), ...argv.slice(at + 2)] };
}

if (isMain(import.meta.url)) {
  cli(async () => {
    const { times, ids } = parseArgs(process.argv.slice(2));
    return times === null ? test(ids) : repeat(times, ids);
  });
}
