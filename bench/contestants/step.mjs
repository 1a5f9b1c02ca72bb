// Contestant 1c: the package's `pollStep`, as a cron worker runs it: one bounded round per
// tick, the cursor carried from round to round, `process.cpuUsage` around each round (the
// Worker CPU a tick costs). Its summary carries the CPU of every round, the main thread's
// share of it, its requests, and what Node's own `fetch` costs on this machine (below).
import { readFileSync } from "node:fs";
import { cronRounds, measuredApart } from "./rounds.mjs";
import { loadPackage } from "./package.mjs";
import { REPLAY_HEADER } from "../../sim/index.js";

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
 * `work()`'s result with the CPU (µs) it took: the process's (`micros`) and, where known, the
 * main thread's (`threadMicros`).
 */
async function cpuAround(work) {
  const thread = mainThreadMicros();
  const before = process.cpuUsage();
  const value = await work();
  const used = process.cpuUsage(before);
  return { value, micros: used.user + used.system, threadMicros: thread === null ? undefined : mainThreadMicros() - thread };
}

/**
 * The CPU (µs) of a bare `fetch` + `json()` of `url`, `times` times `gapMs` apart: the part
 * of a round that is Node's HTTP client and JSON parsing, whatever the package does.
 */
function bareFetchMicros(url, headers, times, gapMs) {
  return measuredApart(
    async () => (await cpuAround(async () => (await fetch(url, { headers })).json())).micros,
    times,
    gapMs,
  );
}

/**
 * The CPU (µs) of `pollStep` rounds that read a status through a `fetch` answering a parsed
 * pending status at once (no HTTP, no JSON text): what the package itself costs a status
 * round, `times` times `gapMs` apart.
 */
function packageAloneMicros(options, times, gapMs) {
  const headers = new Headers();
  const body = { uid: options.jobUid, status: "pending", row_count: 0, total_row_count: 0, error_message: null };
  const fetch = () => Promise.resolve({ status: 200, headers, json: () => Promise.resolve(body) });
  return measuredApart(
    async () => {
      const { value: step, micros } = await cpuAround(() => pollStep({ ...options, fetch }));
      if (step.requests !== 1 || step.error) throw new Error("the package-alone round was not one status read");
      return micros;
    },
    times,
    gapMs,
  );
}

/**
 * A `fetch` that records each request's URL and headers as given (to replay them bare), then
 * sends it. Copying them into a `Headers` here would charge the round work its replay is not
 * charged: the replay builds its `Headers` from them before its CPU is measured.
 */
function recordingFetch() {
  const sent = [];
  const recording = (url, init = {}) => {
    sent.push({ url, headers: init.headers });
    return fetch(url, init);
  };
  return { fetch: recording, sent };
}

/**
 * A full collection first (the child runs with `--expose-gc`), so that neither a round nor its
 * replay is charged for collecting the other's garbage, or the consumer's.
 */
function collected() {
  globalThis.gc?.();
}

/**
 * The CPU (µs) of the requests a round made, made again bare: `fetch` + `json()` with the same
 * headers, one after the other, each body kept until the last is read (a round keeps the rows
 * it returns as long); the process's (`micros`) and the main thread's
 * (`threadMicros`, as the round's). The simulator answers them as it answered the round (the
 * same rows) but counts none of them (REPLAY_HEADER): the workload's requests and bytes stay
 * the round's.
 */
function bareReplayMicros(sent) {
  const requests = sent.map(({ url, headers }) => {
    const replay = new Headers(headers);
    replay.set(REPLAY_HEADER, "1");
    return { url: String(url), headers: replay };
  });
  collected();
  return cpuAround(async () => {
    const bodies = [];
    for (const { url, headers } of requests) bodies.push(await (await fetch(url, { headers })).json());
    return bodies;
  });
}

export function createStep(options) {
  const { baseUrl, apiKey, projectId, jobUid, intervalMs, retry, deadlineMs, onBatch, onStatus, calibrationJobUid } = options;
  const stopper = new AbortController();

  /**
   * Bare reads of a finished 1000-row run (not the workload's): its status and its page; and
   * the package alone: a status round whose `fetch` answers a parsed pending status at once.
   */
  async function calibrate() {
    if (!calibrationJobUid) return undefined;
    const headers = { authorization: `x-api-key ${apiKey}`, "x-project-id": projectId };
    const run = `${baseUrl}/jobs/${encodeURIComponent(calibrationJobUid)}`;
    return {
      statusMicros: await bareFetchMicros(run, headers, 15, intervalMs),
      pageMicros: await bareFetchMicros(`${run}/results`, headers, 15, intervalMs),
      packageMicros: await packageAloneMicros({ baseUrl, apiKey, projectId, jobUid: calibrationJobUid, retry, deadlineMs }, 15, intervalMs),
    };
  }

  /**
   * One round, with the process's and the main thread's CPU around it; and its replay: the
   * same requests again, bare (`fetch` + `json()`, the same headers), with their CPU, what the
   * runtime alone costs for what the round asked.
   */
  async function round(cursor) {
    const { fetch: recording, sent } = recordingFetch();
    collected();
    const { value: step, micros, threadMicros } = await cpuAround(() => pollStep({ baseUrl, apiKey, projectId, jobUid, retry, deadlineMs, cursor, fetch: recording }));
    const replay = async () => {
      const bare = await bareReplayMicros(sent);
      return { bareMicros: bare.micros, bareThreadMicros: bare.threadMicros };
    };
    return { step, cpuMicros: micros, threadMicros, replay };
  }

  async function start() {
    // A first round warms the JIT (as the workerd contestant's does): the wasm is compiled by
    // preload(), but the first rounds of its glue and of Node's fetch ran cold (≈40 ms, then
    // ≈12 ms, against ≈3 ms). Made on the calibration run, which is not the workload's, so its
    // requests are not counted; a cron Worker's isolate runs every tick after the first warm.
    if (calibrationJobUid) await pollStep({ baseUrl, apiKey, projectId, jobUid: calibrationJobUid, retry, deadlineMs });
    return cronRounds({ round, intervalMs, signal: stopper.signal, onBatch, onStatus });
  }

  // Once the run is measured (its completion and CPU taken): the bare fetch's cost.
  const afterwards = async () => ({ calibration: await calibrate() });
  return { start, stop: () => stopper.abort(new Error("stopped")), afterwards };
}
