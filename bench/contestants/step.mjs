// Contestant 1c: the package's `pollStep`, as a cron worker runs it: one bounded round per
// tick, the cursor carried from round to round, `process.cpuUsage` around each round (the
// Worker CPU a tick costs). Its summary carries the CPU of every round, the main thread's
// share of it, its requests, and what Node's own `fetch` costs on this machine (below).
import { readFileSync } from "node:fs";
import { sleep } from "./http.mjs";
import { loadPackage } from "./package.mjs";

const { pollStep } = await loadPackage();

/**
 * CPU time (µs) of this process's main thread so far (Linux: /proc schedstat, in ns), or
 * null elsewhere. `process.cpuUsage` also counts V8's compiler and GC helper threads.
 */
function mainThreadMicros() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1000;
  } catch {
    return null;
  }
}

/**
 * The CPU (µs) of a bare `fetch` + `json()` of `url`, `times` times `gapMs` apart: the part
 * of a round that is Node's HTTP client and JSON parsing, whatever the package does.
 */
async function bareFetchMicros(url, headers, times, gapMs) {
  const spent = [];
  for (let i = 0; i < times; i++) {
    const before = process.cpuUsage();
    await (await fetch(url, { headers })).json();
    const used = process.cpuUsage(before);
    spent.push(used.user + used.system);
    await sleep(gapMs);
  }
  return spent;
}

export function createStep(options) {
  const { baseUrl, apiKey, projectId, jobUid, intervalMs, retry, deadlineMs, onBatch, onStatus, calibrationJobUid } = options;
  const stopper = new AbortController();

  /** Bare reads of a finished 1000-row run (not the workload's): its status and its page. */
  async function calibrate() {
    if (!calibrationJobUid) return undefined;
    const headers = { authorization: `x-api-key ${apiKey}`, "x-project-id": projectId };
    const run = `${baseUrl}/jobs/${encodeURIComponent(calibrationJobUid)}`;
    return { statusMicros: await bareFetchMicros(run, headers, 15, intervalMs), pageMicros: await bareFetchMicros(`${run}/results`, headers, 15, intervalMs) };
  }

  async function start() {
    let cursor;
    let offset = 0;
    let requests = 0;
    let status = null;
    const roundCpuMicros = [];
    const roundThreadMicros = [];
    const roundRequests = [];
    for (;;) {
      const thread = mainThreadMicros();
      const before = process.cpuUsage();
      const step = await pollStep({ baseUrl, apiKey, projectId, jobUid, retry, deadlineMs, cursor });
      const spent = process.cpuUsage(before);
      roundCpuMicros.push(spent.user + spent.system);
      if (thread !== null) roundThreadMicros.push(mainThreadMicros() - thread);
      roundRequests.push(step.requests);
      requests += step.requests;
      cursor = step.cursor;
      if (step.results.length > 0) {
        await onBatch?.({ results: step.results, offset });
        offset += step.results.length;
      }
      if (step.status !== status) {
        status = step.status;
        onStatus?.({ status });
      }
      if (step.done) {
        if (step.error) throw step.error;
        return { status, totalResults: offset, requests, rounds: roundCpuMicros.length, roundCpuMicros, roundThreadMicros, roundRequests };
      }
      await sleep(intervalMs, stopper.signal);
    }
  }

  // Once the run is measured (its completion and CPU taken): the bare fetch's cost.
  const afterwards = async () => ({ calibration: await calibrate() });
  return { start, stop: () => stopper.abort(new Error("stopped")), afterwards };
}
