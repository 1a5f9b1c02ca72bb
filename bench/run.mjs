// `npm run bench`: every contestant on every workload, one after the other (never running
// at the same time, so each one's CPU is its own), against one simulator over HTTP on
// 127.0.0.1; a workload of several trials has the contestants take turns, trial by trial.
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
import { CONTESTANTS, contestant, plays } from "./contestants/index.mjs";
import { costCurve, figures } from "./figures.mjs";
import { bindingsLines, measureBindingsBigRun } from "./bindings-big-run.mjs";
import { measureBigRun } from "./demo-big-run.mjs";
import { machine, shippedSize } from "./machine.mjs";
import { chartSvg, markdownTable } from "./report.mjs";
import { scaledOptions, scaledSpec, selectWorkloads } from "./workloads.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_OUT = path.join(here, "results");
const API_KEY = "bench-key";
const PROJECT_ID = "bench-project";
const CHARTED = new Set(["bursty", "large"]);
/** Not workloads of the contestants: the demo page in Chromium (bench/demo-big-run.mjs), the React and Vue bindings (bench/bindings-big-run.mjs). */
const DEMO_BIG_RUN = "demo-big-run";
const BINDINGS_BIG_RUN = "bindings-big-run";
const IN_CHROMIUM = [DEMO_BIG_RUN, BINDINGS_BIG_RUN];
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

/**
 * What `figures` reads of the simulator after a trial, taken before the next trial resets it.
 * @param {ReturnType<import("../sim/index.js").createSim>} sim
 * @param {string[]} uids
 */
function simView(sim, uids) {
  const all = sim.stats();
  const per = new Map(uids.map((uid) => [uid, { stats: sim.stats(uid), job: sim.job(uid) }]));
  return { stats: (uid) => (uid === undefined ? all : per.get(uid).stats), job: (uid) => per.get(uid).job };
}

/**
 * One trial: a fresh child process and a freshly reset simulator; the contestant starts
 * `startAfterMs` (real time) after the jobs are created.
 */
async function runTrial(server, workload, who, startAfterMs) {
  const { sim } = server;
  sim.reset();
  const child = fork(path.join(here, "contestant-process.mjs"), [who.id, server.origin], { execArgv: ["--expose-gc", ...extraNodeArgs()], stdio: "inherit" });
  try {
    await nextMessage(child, "ready", 30_000);
    // Same uids for every contestant: same rows, same timeline, same fault dice.
    const jobs = Array.from({ length: workload.jobs }, (_, i) => sim.createJob(scaledSpec(workload, `${workload.id}-${i}`)).jobUid);
    // `pollStep` rounds are measured against a bare fetch of a run outside the workload.
    const calibration = who.calibrated ? sim.createJob(CALIBRATION(workload.id)).jobUid : undefined;
    const excluded = calibration ? [calibration] : [];
    if (startAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, startAfterMs));
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
    const trial = { sim: simView(sim, [...jobs, ...excluded]), outcome, excluded, wallMs: Date.now() - started };
    if (CHARTED.has(workload.id)) trial.curve = costCurve(sim.job(jobs[0]), sim.stats(jobs[0]).log);
    if (who.id === "seed" && workload.jobs === 1) {
      // The seed's cost had it kept an exact 10 s cadence (its ticks take time, so it does not).
      trial.model = sim.naiveCost(jobs[0], { intervalMs: scaledOptions(workload).intervalMs, origin: server.origin });
    }
    return trial;
  } finally {
    child.kill();
  }
}

/**
 * Every contestant on one workload, `trials` times: in trial k the pollers start k/trials of
 * an interval after the run is created. The contestants take turns within a trial, so a
 * change of the machine's load falls on all of them alike. Each contestant's trials are
 * pooled by `figures`.
 */
async function runWorkload(server, workload, who, trials, log) {
  const intervalMs = scaledOptions(workload).intervalMs;
  const playing = who.filter((c) => plays(c, workload.id));
  const runs = new Map(playing.map((c) => [c, []]));
  for (let k = 0; k < trials; k++) {
    for (const c of playing) {
      if (k === 0) log(`bench: ${workload.id} × ${c.label} …`);
      runs.get(c).push(await runTrial(server, workload, c, (k * intervalMs) / trials));
    }
  }
  return playing.map((c) => {
    const [first] = runs.get(c);
    const r = { workload: workload.id, ...figures({ workload, contestant: c, trials: runs.get(c) }) };
    if (first.curve) r.curve = first.curve;
    if (first.model) r.model = first.model;
    log(`bench: ${workload.id} × ${c.label}: ${r.requests.total} requests, ${r.rows.delivered}/${r.rows.expected} rows, ${(r.wallMs / 1000).toFixed(1)} s`);
    return r;
  });
}

/**
 * Runs the bench and writes its outputs. Returns the report object (also written as JSON).
 * @param {{ workloads?: string[], contestants?: string[], outDir?: string, log?: (line: string) => void,
 *   print?: boolean, trials?: number }} [options] `print` writes the table to stdout; `trials`
 *   overrides every workload's own number of trials.
 */
export async function runBench({ workloads = [], contestants = [], outDir = DEFAULT_OUT, log = console.error, print = true, trials } = {}) {
  const withDemo = workloads.length === 0 || workloads.includes(DEMO_BIG_RUN);
  const withBindings = workloads.length === 0 || workloads.includes(BINDINGS_BIG_RUN);
  const named = workloads.filter((id) => !IN_CHROMIUM.includes(id));
  // `demo-big-run` (or `bindings-big-run`) alone runs only that; no name at all runs everything.
  const selected = named.length === 0 && workloads.length > 0 ? [] : selectWorkloads(named);
  const who = contestants.length === 0 ? CONTESTANTS : contestants.map(contestant);
  const loadBefore = loadavg()[0];
  const server = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 7 });
  const results = [];
  try {
    for (const workload of selected) results.push(...(await runWorkload(server, workload, who, trials ?? workload.trials ?? 1, log)));
  } finally {
    await server.close();
  }
  const demoBigRun = withDemo ? await measureBigRun() : undefined;
  if (demoBigRun) {
    const { longTasks, longestTaskMs, mostRowsInDom, cpuOver50ms, longestCpuMs } = demoBigRun;
    log(`bench: ${DEMO_BIG_RUN}: ${longTasks} long tasks, the longest ${longestTaskMs} ms (by CPU time ${cpuOver50ms} over 50 ms, the longest ${longestCpuMs} ms), at most ${mostRowsInDom} <tr>s`);
  }
  const bindingsBigRun = withBindings ? await measureBindingsBigRun() : undefined;
  if (bindingsBigRun) for (const line of bindingsLines(bindingsBigRun)) log(`bench: ${BINDINGS_BIG_RUN}: ${line}`);
  const report = {
    date: new Date().toISOString(),
    machine: machine(),
    load: { before: loadBefore, after: loadavg()[0] },
    size: await shippedSize(),
    workloads: selected.map(({ id, what, jobs, trials: t, scale, spec, faults }) => ({ id, what, jobs, trials: trials ?? t ?? 1, scale, spec, faults, options: scaledOptions({ scale }) })),
    results,
    ...(demoBigRun ? { demoBigRun } : {}),
    ...(bindingsBigRun ? { bindingsBigRun } : {}),
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

/**
 * The push workload (bench/push.mjs) is a workload of its own: viewers of one run in workerd,
 * not contestants against the simulator. `push` runs it alone; a full run (no workload named)
 * runs it after the others.
 */
async function runAll(options) {
  const push = options.workloads.includes("push");
  const workloads = options.workloads.filter((id) => id !== "push");
  if (!push || workloads.length > 0) await runBench({ ...options, workloads });
  if (push || options.workloads.length === 0) {
    const { runPushBench } = await import("./push.mjs");
    const { table } = await runPushBench({ outDir: options.outDir });
    process.stdout.write(`\n${table}\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runAll(parseArgs(process.argv.slice(2))).catch((error) => {
    console.error(error?.stack ?? error);
    process.exit(1);
  });
}
