// `npm run bench`: every contestant on every workload, one after the other (never
// interleaved, so each one's CPU is its own), against one simulator over HTTP on 127.0.0.1.
// Prints the markdown table; writes bench/results/latest.{json,md,svg}.
//   node bench/run.mjs [workload ...] [--out dir] [--contestants id,id]
// BENCH_NODE_ARGS adds Node flags to the contestant processes, e.g. to profile them:
//   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/run.mjs large --contestants library
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startSimServer } from "../sim/server.mjs";
import { CONTESTANTS, contestant } from "./contestants/index.mjs";
import { costCurve, figures } from "./figures.mjs";
import { machine, shippedSize } from "./machine.mjs";
import { chartSvg, markdownTable } from "./report.mjs";
import { scaledOptions, scaledSpec, selectWorkloads } from "./workloads.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_OUT = path.join(here, "results");
const API_KEY = "bench-key";
const PROJECT_ID = "bench-project";
const CHARTED = new Set(["bursty", "large"]);
/** A run already over, one full 1000-row page: what a bare fetch of a status and a page costs. */
const CALIBRATION = (id) => ({ jobUid: `${id}-calibration`, rows: 1000, pageSize: 1000, durationMs: 1, startDelayMs: 0 });

/** Waits for the child's next message of `type` (or its death). */
function nextMessage(child, type, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(reject, new Error(`no "${type}" from the contestant within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m) => {
      if (m.type === type) done(resolve, m);
      else if (m.type === "failed") done(reject, new Error(m.error));
    };
    const onExit = (code) => done(reject, new Error(`contestant process exited with ${code} before "${type}"`));
    function done(fn, value) {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      fn(value);
    }
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}

const extraNodeArgs = () => (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);

/** Generous: the run's real length three times over, plus start-up. */
function deadlineMs(workload) {
  const { durationMs, startDelayMs } = workload.spec;
  return ((durationMs + startDelayMs) / workload.scale) * 3 + 60_000;
}

/** One contestant on one workload, in a fresh child process and a freshly reset simulator. */
async function runOne(server, workload, who) {
  const { sim } = server;
  sim.reset();
  const child = fork(path.join(here, "contestant-process.mjs"), [who.id], { execArgv: ["--expose-gc", ...extraNodeArgs()], stdio: "inherit" });
  try {
    await nextMessage(child, "ready", 30_000);
    // Same uids for every contestant: same rows, same timeline, same fault dice.
    const jobs = Array.from({ length: workload.jobs }, (_, i) => sim.createJob(scaledSpec(workload, `${workload.id}-${i}`)).jobUid);
    // `pollStep` rounds are measured against Node's bare fetch of a run outside the workload.
    const calibration = who.id === "library-step" ? sim.createJob(CALIBRATION(workload.id)).jobUid : undefined;
    const started = Date.now();
    child.send({
      type: "go",
      jobs,
      calibrationJobUid: calibration,
      origin: server.origin,
      connection: { baseUrl: server.url, apiKey: API_KEY, projectId: PROJECT_ID },
      options: scaledOptions(workload),
      measureIdle: Boolean(workload.measureIdle),
      idleTimeoutMs: workload.spec.startDelayMs / workload.scale,
    });
    const outcome = await nextMessage(child, "done", deadlineMs(workload));
    const result = figures({ workload, contestant: who, sim, outcome, wallMs: Date.now() - started, excluded: calibration ? [calibration] : [] });
    if (CHARTED.has(workload.id)) result.curve = costCurve(sim.job(jobs[0]), sim.stats(jobs[0]).log);
    if (who.id === "seed" && workload.jobs === 1) {
      // The seed's cost had it kept an exact 10 s cadence (its ticks take time, so it does not).
      result.model = sim.naiveCost(jobs[0], { intervalMs: scaledOptions(workload).intervalMs, origin: server.origin });
    }
    return result;
  } finally {
    child.kill();
  }
}

/**
 * Runs the bench and writes its outputs. Returns the report object (also written as JSON).
 * @param {{ workloads?: string[], contestants?: string[], outDir?: string, log?: (line: string) => void,
 *   print?: boolean }} [options] `print` writes the table to stdout.
 */
export async function runBench({ workloads = [], contestants = [], outDir = DEFAULT_OUT, log = console.error, print = true } = {}) {
  const selected = selectWorkloads(workloads);
  const who = contestants.length === 0 ? CONTESTANTS : contestants.map(contestant);
  const loadBefore = loadavg()[0];
  const server = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 7 });
  const results = [];
  try {
    for (const workload of selected) {
      for (const c of who) {
        if (c.skip?.includes(workload.id)) continue;
        log(`bench: ${workload.id} × ${c.label} …`);
        const r = await runOne(server, workload, c);
        log(`bench: ${workload.id} × ${c.label}: ${r.requests.total} requests, ${r.rows.delivered}/${r.rows.expected} rows, ${(r.wallMs / 1000).toFixed(1)} s`);
        results.push({ workload: workload.id, ...r });
      }
    }
  } finally {
    await server.close();
  }
  const report = {
    date: new Date().toISOString(),
    machine: machine(),
    load: { before: loadBefore, after: loadavg()[0] },
    size: await shippedSize(),
    workloads: selected.map(({ id, what, jobs, scale, spec, faults }) => ({ id, what, jobs, scale, spec, faults, options: scaledOptions({ scale }) })),
    results,
  };
  const table = writeOutputs(report, outDir);
  if (print) process.stdout.write(table);
  return report;
}

/** Writes latest.{json,md,svg} into `outDir`; returns the markdown table. */
function writeOutputs(report, outDir) {
  mkdirSync(outDir, { recursive: true });
  const table = markdownTable(report);
  writeFileSync(path.join(outDir, "latest.json"), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(path.join(outDir, "latest.md"), table);
  writeFileSync(path.join(outDir, "latest.svg"), chartSvg(report));
  return table;
}

function parseArgs(argv) {
  const options = { workloads: [], contestants: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--out") options.outDir = path.resolve(argv[++i]);
    else if (argv[i] === "--contestants") options.contestants = argv[++i].split(",");
    else options.workloads.push(argv[i]);
  }
  return options;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runBench(parseArgs(process.argv.slice(2))).catch((error) => {
    console.error(error?.stack ?? error);
    process.exit(1);
  });
}
