// Contestant 1d: `pollStep` rounds run where a cron Worker runs them, in workerd (Miniflare),
// the cursor carried from round to round like contestant 1c. The CPU of a round is workerd's
// own: every thread of its process, from Linux's /proc schedstat, around each round. That is
// what Cloudflare bills and more: the isolate's JS and wasm, and also workerd's native HTTP
// client and the request that carries the round in (I/O is not billed; a cron trigger is no
// request). Measured alike after the run: a request that does nothing (the carrying, whose
// median the report takes off each round), and a bare `fetch` + `json()` of a status and of a
// 1000-row page in the same Worker.
// Runs this checkout's build (dist/, pkg/), not BENCH_PACKAGE's.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { PACKAGE_MODULES } from "../../worker/miniflare-options.mjs";
import { REPLAY_HEADER } from "../../sim/index.js";
import { cronRounds, measuredApart } from "./rounds.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The pids of this process's children named `comm` (Linux). */
function children(comm) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && name === comm) found.push(pid);
    } catch {
      // the process ended while listed
    }
  }
  return found;
}

/** CPU time (µs) of every thread of process `pid` so far. */
function processMicros(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended while listed
    }
  }
  return ns / 1000;
}

/** workerd running the step Worker; `call(path, body)` posts JSON and returns workerd's CPU with the answer. */
async function startWorkerd(connection) {
  const before = new Set(children("workerd"));
  const mf = new Miniflare({
    ...PACKAGE_MODULES,
    scriptPath: path.join(here, "workerd", "step-worker.js"),
    bindings: { BASE_URL: connection.baseUrl, API_KEY: connection.apiKey, PROJECT_ID: connection.projectId },
  });
  await mf.ready;
  const [pid] = children("workerd").filter((p) => !before.has(p));
  if (!pid) throw new Error("workerd's process was not found");
  async function call(pathname, body) {
    const cpu = processMicros(pid);
    const answer = await mf.dispatchFetch(`http://localhost${pathname}`, { method: "POST", body: JSON.stringify(body) });
    const json = await answer.json();
    return { json, micros: processMicros(pid) - cpu };
  }
  return { call, dispose: () => mf.dispose() };
}

export function createStepWorkerd(options) {
  const { baseUrl, apiKey, projectId, jobUid, intervalMs, retry, deadlineMs, onBatch, onStatus, calibrationJobUid } = options;
  const stopper = new AbortController();
  let workerd = null;

  /**
   * 15 requests that do nothing (what Miniflare's dispatch into workerd costs, which a cron
   * trigger does not go through), then bare reads of a finished 1000-row run (not the
   * workload's), and status rounds whose `fetch` answers at once (the package alone), 15
   * each: all an interval apart.
   */
  async function calibrate() {
    if (!calibrationJobUid || !workerd) return undefined;
    const headers = { authorization: `x-api-key ${apiKey}`, "x-project-id": projectId };
    const run = `${baseUrl}/jobs/${encodeURIComponent(calibrationJobUid)}`;
    const measure = (pathname, body) => measuredApart(async () => (await workerd.call(pathname, body)).micros, 15, intervalMs);
    return {
      dispatchMicros: await measure("/nothing", {}),
      statusMicros: await measure("/bare", { url: run, headers }),
      pageMicros: await measure("/bare", { url: `${run}/results`, headers }),
      packageMicros: await measure("/alone", { jobUid: calibrationJobUid, retry, deadlineMs }),
    };
  }

  /** One round in workerd; the rows come back as their indexes, the error as its code. */
  async function round(cursor) {
    const { json, micros } = await workerd.call("/step", { jobUid, retry, deadlineMs, cursor });
    const results = json.indexes.map((index) => ({ index }));
    // The same requests again, bare, in the same Worker: what workerd alone costs for them.
    const replay = async () => ({ bareMicros: (await workerd.call("/replay", { replayHeader: REPLAY_HEADER })).micros });
    return { step: { ...json, results, error: json.error && new Error(json.error) }, cpuMicros: micros, replay };
  }

  async function start() {
    workerd = await startWorkerd({ baseUrl, apiKey, projectId });
    // The first round instantiates the wasm (as the Node contestant's preload does): made on
    // the calibration run, which is not the workload's, so its requests are not counted.
    if (calibrationJobUid) await workerd.call("/step", { jobUid: calibrationJobUid, retry, deadlineMs });
    return cronRounds({ round, intervalMs, signal: stopper.signal, onBatch, onStatus });
  }

  // Once the run is measured: the bare fetch's cost in the same Worker, then workerd ends.
  const afterwards = async () => {
    try {
      return { calibration: await calibrate() };
    } finally {
      await workerd?.dispose();
    }
  };
  return { start, stop: () => stopper.abort(new Error("stopped")), afterwards };
}
