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
import { sleep } from "./http.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(here, "..", "..");

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
    cf: false,
    modules: true,
    modulesRoot: REPO_ROOT,
    scriptPath: path.join(here, "workerd", "step-worker.js"),
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-09-01",
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
   * workload's), 15 each: all an interval apart.
   */
  async function calibrate() {
    if (!calibrationJobUid || !workerd) return undefined;
    const headers = { authorization: `x-api-key ${apiKey}`, "x-project-id": projectId };
    const run = `${baseUrl}/jobs/${encodeURIComponent(calibrationJobUid)}`;
    const measure = async (pathname, body) => {
      const spent = [];
      for (let i = 0; i < 15; i++) {
        spent.push((await workerd.call(pathname, body)).micros);
        await sleep(intervalMs);
      }
      return spent;
    };
    return {
      dispatchMicros: await measure("/nothing", {}),
      statusMicros: await measure("/bare", { url: run, headers }),
      pageMicros: await measure("/bare", { url: `${run}/results`, headers }),
    };
  }

  async function start() {
    workerd = await startWorkerd({ baseUrl, apiKey, projectId });
    // The first round instantiates the wasm (as the Node contestant's preload does): made on
    // the calibration run, which is not the workload's, so its requests are not counted.
    if (calibrationJobUid) await workerd.call("/step", { jobUid: calibrationJobUid, retry, deadlineMs });
    let cursor;
    let offset = 0;
    let requests = 0;
    let status = null;
    const roundCpuMicros = [];
    const roundRequests = [];
    for (;;) {
      const { json: step, micros } = await workerd.call("/step", { jobUid, retry, deadlineMs, cursor });
      roundCpuMicros.push(micros);
      roundRequests.push(step.requests);
      requests += step.requests;
      cursor = step.cursor;
      if (step.indexes.length > 0) {
        await onBatch?.({ results: step.indexes.map((index) => ({ index })), offset });
        offset += step.indexes.length;
      }
      if (step.status !== status) {
        status = step.status;
        onStatus?.({ status });
      }
      if (step.done) {
        if (step.error) throw new Error(step.error);
        return { status, totalResults: offset, requests, rounds: roundCpuMicros.length, roundCpuMicros, roundRequests };
      }
      await sleep(intervalMs, stopper.signal);
    }
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
