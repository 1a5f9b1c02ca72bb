// The push workload (`node bench/run.mjs push`, part of `npm run bench`): 1, 10, 100 and 1,000
// viewers of one bursty run, in workerd locally (Miniflare) with the simulator as Captain Data.
// Each count twice: viewers on the worker's stream (`transport: "push"`), and the same viewers
// polling the worker every 10 s (`transport: "poll"`). Measured per case: requests to the API
// (the worker's, recorded by its outbound service), requests to the worker (HTTP reads, or
// sockets opened), bytes sent to the viewers, and the delay from the worker's commit of a batch
// to each viewer's onBatch (p50, p95, max over every row of every viewer).
//
// The commit time of a row: a probe socket of its own (not counted) receives each commit's rows
// frame; the commit is the end of the last API answer of the worker's step before that frame
// (the worker stores and publishes right after it), or the frame itself when none is recorded
// (www/commit-times.js: the demo's viewers page measures its delays the same way).
// Real time, not scaled: a delay of a socket is network latency, which does not shrink.
//   node bench/push.mjs [--counts 1,10,100,1000] [--out dir]
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import WebSocket from "ws";
import { JobPoller } from "captaindata-poller";
import { startSimServer } from "../sim/server.mjs";
import { LOCAL_SECRETS, miniflareOptions } from "../worker/miniflare-options.mjs";
import { commitTimes, rowDelays } from "../www/commit-times.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const COUNTS = [1, 10, 100, 1000];
/**
 * The bursty run: 1,000 rows in 10 bursts 3 s apart, one page of 1000 rows. It starts after
 * every viewer has joined: viewers join over one polling interval, as an audience does (1,000
 * pollers started in the same millisecond are a load test of the loopback, not of the worker).
 */
const RUN = Object.freeze({ rows: 1000, durationMs: 30_000, pageSize: 1000, arrival: { bursts: 10 }, startDelayMs: 12_000 });
const JOIN_OVER_MS = 10_000;
/** The worker's cadence per run, and the polling viewers' interval. */
const WORKER_CADENCE_MS = 1000;
const POLL_EVERY_MS = 10_000;
const ADMIN = { authorization: `Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}` };

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function startWorker() {
  const server = await startSimServer({ apiKey: LOCAL_SECRETS.CAPTAINDATA_API_KEY, projectId: LOCAL_SECRETS.CAPTAINDATA_PROJECT_ID, seed: 5 });
  const outbound = [];
  const outboundService = async (request) => {
    const record = { url: request.url, step: request.headers.get("x-poller-step"), end: null };
    outbound.push(record);
    const body = ["GET", "HEAD"].includes(request.method) ? undefined : await request.arrayBuffer();
    const response = await server.sim.handle(new Request(request.url, { method: request.method, headers: request.headers, body }));
    const bytes = await response.arrayBuffer();
    record.end = Date.now();
    return new Response(bytes, { status: response.status, headers: response.headers });
  };
  // Every viewer holds the same read token: its own cap (100 streams) is raised above 1,000 too.
  const bindings = { POLL_INTERVAL_MS: String(WORKER_CADENCE_MS), MAX_STREAM_VIEWERS: "2000", MAX_STREAM_VIEWERS_PER_TOKEN: "2000" };
  const mf = new Miniflare(await miniflareOptions({ baseUrl: server.url, outboundService, bindings }));
  const origin = (await mf.ready).origin;
  return { server, mf, origin, outbound };
}

/** A raw socket that notes when each commit's rows reached the stream. */
function probe(origin, jobUid, token) {
  const seen = new Map(); // offset → time
  const ws = new WebSocket(`${origin.replace(/^http/, "ws")}/v3/jobs/${jobUid}/stream?after=0`, ["captaindata-poller.v1", `token.${token}`]);
  const done = new Promise((resolve) => {
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === "rows") {
        frame.rows.forEach((_, i) => seen.set(frame.offset + i, Date.now()));
        // The stream sends a window of rows ahead of the acks, no more (worker/README.md).
        ws.send(JSON.stringify({ type: "ack", offset: frame.offset + frame.rows.length }));
      }
      if (frame.type === "end") resolve();
    });
    ws.on("close", resolve);
  });
  return { seen, done, ws };
}

/** One viewer: a JobPoller on the worker that records its rows' arrival, requests and bytes. */
function viewer(origin, jobUid, token, transport) {
  const v = { arrivals: [], rows: 0, requests: 0, bytes: 0, joined: Date.now() };
  class CountedSocket extends WebSocket {
    constructor(...args) {
      super(...args);
      v.requests += 1;
      this.on("message", (data) => (v.bytes += data.length));
    }
  }
  const poller = new JobPoller({
    jobUid,
    baseUrl: `${origin}/v3`,
    headers: { "x-read-token": token },
    transport,
    WebSocket: CountedSocket,
    intervalMs: POLL_EVERY_MS,
    maxDurationMs: 600_000,
    retry: { retries: 10, minDelayMs: 1000, maxDelayMs: 5000 },
    fetch: async (url, init) => {
      v.requests += 1;
      const response = await fetch(url, init);
      const body = await response.arrayBuffer();
      v.bytes += body.byteLength;
      return new Response(body, { status: response.status, headers: response.headers });
    },
    onBatch(batch) {
      v.arrivals.push({ at: Date.now(), offset: batch.offset, n: batch.results.length });
      v.rows += batch.results.length;
    },
  });
  v.done = poller.start().catch((error) => ({ status: `failed: ${error.code}` }));
  return v;
}

/** When the worker's step answers for this run ended. */
function stepAnswerEnds(outbound, jobUid) {
  return outbound.filter((r) => r.step?.startsWith(`${jobUid}:`) && r.end !== null).map((r) => r.end);
}

async function runCase(w, count, transport) {
  const { jobUid } = w.server.sim.createJob(RUN);
  const tracked = await (await fetch(`${w.origin}/v3/jobs/${jobUid}/track`, { method: "POST", headers: ADMIN })).json();
  const token = tracked.read_token;
  const p = probe(w.origin, jobUid, token);
  const viewers = [];
  const t0 = Date.now();
  for (let i = 0; i < count; i++) {
    await wait(Math.max(0, t0 + (i * JOIN_OVER_MS) / count - Date.now()));
    viewers.push(viewer(w.origin, jobUid, token, transport));
  }
  const summaries = await Promise.all(viewers.map((v) => v.done));
  await p.done;
  p.ws.close();
  const commits = commitTimes(p.seen, stepAnswerEnds(w.outbound, jobUid));
  const delays = [];
  let wrong = 0;
  for (const v of viewers) {
    if (v.rows !== RUN.rows) wrong += 1;
    // Rows stored before the viewer joined are its backlog, not a delay of the transport.
    delays.push(...rowDelays(v, commits));
  }
  delays.sort((a, b) => a - b);
  const api = w.outbound.filter((r) => r.url.includes(`/jobs/${jobUid}`)).length;
  return {
    viewers: count,
    transport,
    apiRequests: api,
    workerRequests: viewers.reduce((s, v) => s + v.requests, 0),
    bytesToViewers: viewers.reduce((s, v) => s + v.bytes, 0),
    delayMs: { p50: quantile(delays, 0.5), p95: quantile(delays, 0.95), max: delays.at(-1) ?? null },
    complete: summaries.every((s) => s.status === "finished") && wrong === 0,
  };
}

const kb = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} KB`);
const ms = (n) => (n === null ? "–" : n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`);

export function pushTable(results) {
  const lines = [
    `Push workload: one bursty run (${RUN.rows} rows in ${RUN.arrival.bursts} bursts over ${RUN.durationMs / 1000} s), the worker polling it every ${WORKER_CADENCE_MS / 1000} s, in workerd (Miniflare) on 127.0.0.1; the viewers join over ${JOIN_OVER_MS / 1000} s before it starts, all in one Node process.`,
    "",
    "| viewers | transport | API requests | requests to the worker | bytes to viewers | commit → onBatch p50 | p95 | max | every row once |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const r of results) {
    const how = r.transport === "push" ? "push (stream)" : `poll every ${POLL_EVERY_MS / 1000} s`;
    lines.push(`| ${r.viewers} | ${how} | ${r.apiRequests} | ${r.workerRequests} | ${kb(r.bytesToViewers)} | ${ms(r.delayMs.p50)} | ${ms(r.delayMs.p95)} | ${ms(r.delayMs.max)} | ${r.complete ? "yes" : "NO"} |`);
  }
  return lines.join("\n");
}

/** Runs every count with both transports; writes `push.json` and `push.md` to `outDir`. */
export async function runPushBench({ counts = COUNTS, outDir = path.join(here, "results"), log = console.error } = {}) {
  const w = await startWorker();
  const results = [];
  try {
    for (const count of counts) {
      for (const transport of ["push", "poll"]) {
        log(`bench: push workload, ${count} viewers, ${transport} …`);
        const r = await runCase(w, count, transport);
        log(`bench: ${count} × ${transport}: ${r.apiRequests} API requests, ${r.workerRequests} to the worker, p95 ${ms(r.delayMs.p95)}`);
        results.push(r);
      }
    }
  } finally {
    await w.mf.dispose();
    await w.server.close();
  }
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, "push.json"), `${JSON.stringify({ run: RUN, workerCadenceMs: WORKER_CADENCE_MS, pollEveryMs: POLL_EVERY_MS, results }, null, 2)}\n`);
  const table = pushTable(results);
  writeFileSync(path.join(outDir, "push.md"), `${table}\n`);
  return { results, table };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const counts = at("--counts")?.split(",").map(Number);
  const outDir = at("--out") ? path.resolve(at("--out")) : undefined;
  const { table } = await runPushBench({ counts, outDir });
  console.log(table);
}
