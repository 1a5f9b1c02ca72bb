// The simulated Captain Data v3 API: one Fetch-API handler (Request → Response) that runs
// in Node, browsers, Service Workers and workerd. No node: imports here.
import { manualClock, systemClock } from "./clock.js";
import {
  ALL_INPUTS_FAILED,
  createJob as buildJob,
  describeJob,
  forceEnd,
  isSuccess,
  isTerminal,
  jobState,
  resultsBody,
  runBody,
  startNow,
} from "./jobs.js";
import { hostileAnswer } from "./hostile.js";
import { seededRandom, seededUid } from "./random.js";
import { createV4, matchV4Route, V4_BASE, V4_KINDS } from "./v4.js";

export { manualClock };

const BASE = "/v3";
const KINDS = ["run", "results", "schedule", "other", "preflight", ...V4_KINDS];
const EXPOSED = "retry-after, x-ratelimit-reset";
const PREFLIGHT_HEADERS = "authorization, x-project-id, x-api-key, content-type";
const WEBHOOK_EVENTS = ["created", "succeeded", "failed"];
const WEBHOOK_MESSAGES = {
  created: "Job successfully created.",
  succeeded: "Job successfully finished.",
  failed: "Job failed.",
};
// v1/v4 error bodies: `error_label` by status (and "All Inputs Failed" by its message).
const ERROR_LABELS = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  429: "TOO_MANY_REQUESTS",
  500: "INTERNAL_SERVER_ERROR",
  502: "BAD_GATEWAY",
  503: "SERVICE_UNAVAILABLE",
  504: "GATEWAY_TIMEOUT",
};
const encoder = new TextEncoder();
/**
 * A measuring aid: a bench that replays a request it has just made (to time its HTTP client
 * alone) sends this header. Such a GET of a v3 run or page is answered as the API answers it,
 * with no injected fault, and left out of the log, the stats and the faults' dice: it changes
 * no figure of the run.
 */
export const REPLAY_HEADER = "x-sim-replay";

/**
 * @typedef {import("./jobs.js").JobSpec} JobSpec
 * @typedef {{ seq: number, t: number, method: string, path: string, kind: string, fault?: string,
 *   status: number | null, bytes: number, jobUid: string | null, error?: string }} LogEntry
 *   `status` is null while the request is in flight and 0 when the connection was dropped/aborted.
 * @typedef {{ url: string, headers?: Record<string, string>,
 *   events?: ("created" | "succeeded" | "failed")[] }} WebhookTarget
 * @typedef {{ apiKey?: string, projectId?: string, clock?: { now(): number }, seed?: number,
 *   webhook?: WebhookTarget | null, defaults?: JobSpec, errorShape?: "v3" | "v4",
 *   cors?: boolean | string[], v4Defaults?: import("./v4-runs.js").V4RunSpec }} SimOptions
 *   `cors`: true answers every origin (`*`), false none, a list only those origins.
 *   `v4Defaults`: the spec of v4 runs launched by `POST /v4/actions/{name}/async` (sim/README.md).
 */

/** A dropped connection: `handle()` rejects with this; the Node adapter destroys the socket. */
export class SimulatedDrop extends TypeError {
  constructor() {
    super("fetch failed: connection dropped by the simulator");
    this.name = "TypeError";
    this.simDrop = true;
  }
}

function json(status, body, headers = {}) {
  return { status, text: JSON.stringify(body), headers };
}

function toResponse({ status, text, headers }, cors = {}) {
  const all = { ...cors, "content-type": "application/json", ...headers };
  return new Response(status === 204 ? null : text, { status, headers: all });
}

/** The CORS headers of an answer to `origin` under the `cors` option; empty when refused. */
function corsHeaders(policy, origin) {
  if (policy === true) return { "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED };
  if (Array.isArray(policy) && origin !== null && policy.includes(origin)) {
    return { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED, vary: "origin" };
  }
  return Array.isArray(policy) ? { vary: "origin" } : {};
}

function validateOptions({ errorShape, cors, webhook }) {
  if (!["v3", "v4"].includes(errorShape)) throw new TypeError('Expected `errorShape` to be "v3" or "v4"');
  if (typeof cors !== "boolean" && !(Array.isArray(cors) && cors.every((o) => typeof o === "string"))) {
    throw new TypeError("Expected `cors` to be a boolean or an array of origins");
  }
  const unknown = (webhook?.events ?? []).filter((e) => !WEBHOOK_EVENTS.includes(e));
  if (unknown.length > 0) throw new TypeError(`Unknown webhook events ${unknown.join(", ")}; known: ${WEBHOOK_EVENTS.join(", ")}`);
}

/** A delay that ends early (rejecting) when the request is aborted. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(id);
      reject(signal.reason ?? new DOMException("The request was aborted", "AbortError"));
    };
    const id = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Splits `/v3/...` into a route; segments are decoded, so `%2F` stays inside one segment. */
function matchRoute(method, pathname) {
  if (pathname.startsWith(`${V4_BASE}/`)) return matchV4Route(method, pathname);
  if (!pathname.startsWith(`${BASE}/`)) return { kind: "other" };
  let parts;
  try {
    parts = pathname
      .slice(BASE.length + 1)
      .split("/")
      .map(decodeURIComponent);
  } catch {
    return { kind: "other" };
  }
  const route =
    parts[0] === "jobs" && parts.length === 2
      ? { kind: "run", jobUid: parts[1], method: "GET" }
      : parts[0] === "jobs" && parts.length === 3 && parts[2] === "results"
        ? { kind: "results", jobUid: parts[1], method: "GET" }
        : parts[0] === "workflows" && parts.length === 3 && parts[2] === "schedule"
          ? { kind: "schedule", workflowUid: parts[1], method: "POST" }
          : null;
  if (!route || parts[1] === "") return { kind: "other" };
  return { ...route, allowed: route.method === method };
}

/**
 * Creates a simulator. See sim/README in the brief: launch, run, results with paging,
 * a controllable clock, a seeded fault plan, counters and a webhook.
 * @param {SimOptions} [options]
 */
export function createSim(options = {}) {
  const {
    apiKey = "sim-key",
    projectId = "sim-project",
    seed = 1,
    webhook = null,
    defaults = {},
    errorShape = "v3",
    cors = true,
  } = options;
  validateOptions({ errorShape, cors, webhook });
  const webhookEvents = new Set(webhook?.events ?? WEBHOOK_EVENTS);
  const clock = options.clock ?? systemClock;
  const usesWallClock = !options.clock;
  let uidRandom = seededRandom(seed);
  /** @type {Map<string, ReturnType<typeof buildJob>>} */
  const jobs = new Map();
  /** @type {LogEntry[]} */
  let log = [];
  let webhookLog = [];
  /** When each URL (path + query) was last asked, in a logged request: what a replay answers as of. */
  const answeredAt = new Map();
  const timers = new Set();
  const pendingWebhooks = new Set();
  /** Re-checks of `until()` waiters, run whenever a request or a webhook is logged or settles. */
  const waiters = new Set();
  const changed = () => {
    for (const recheck of [...waiters]) recheck();
  };
  const v4 = createV4({ apiKey, clock, usesWallClock, seed, defaults: options.v4Defaults ?? {}, changed });

  /**
   * Resolves with `check()`'s value once it is truthy: checked now and after every change of the
   * request log or the webhook log (a request seen, answered, dropped or aborted; a webhook sent
   * or answered), so a test waits for the condition itself, never for a duration. Rejects after
   * `timeoutMs` (a bound for a stuck test only) naming `what`.
   * @template T
   * @param {() => T} check
   * @param {{ timeoutMs?: number, what?: string }} [options]
   * @returns {Promise<T>}
   */
  function until(check, { timeoutMs = 30000, what = "a condition on the simulator" } = {}) {
    return new Promise((resolve, reject) => {
      const recheck = () => {
        let value;
        try {
          value = check();
        } catch (e) {
          done();
          return reject(e);
        }
        if (value) {
          done();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      // The bound alone keeps no process alive: a waiter given up on (its test ended) is no reason to stay.
      timer?.unref?.();
      const done = () => {
        clearTimeout(timer);
        waiters.delete(recheck);
      };
      waiters.add(recheck);
      recheck();
    });
  }

  function createJob(spec = {}) {
    const uid = spec.jobUid ?? seededUid(uidRandom);
    if (typeof uid !== "string" || uid === "") throw new TypeError("Expected `jobUid` to be a non-empty string");
    if (jobs.has(uid)) throw new TypeError(`A job with uid ${uid} already exists`);
    const job = buildJob(uid, { ...defaults, ...spec, faults: spec.faults ?? defaults.faults }, clock.now(), seed);
    jobs.set(uid, job);
    notify(job, clock.now());
    watchForEnd(job);
    return { jobUid: uid };
  }

  /** When the end webhook is due: at the end, or `webhookLeadMs` before the natural end. */
  function endNoticeAt(job) {
    return describeJob(job, jobState(job, clock.now())).endsAt - job.spec.webhookLeadMs;
  }

  // With the wall clock and a webhook, timers notice the start and the end; with a manual clock, tick() does.
  function watchForEnd(job) {
    if (!webhook || !usesWallClock) return;
    const { startsAt } = job;
    for (const at of startsAt > clock.now() ? [startsAt, endNoticeAt(job)] : [endNoticeAt(job)]) {
      const id = setTimeout(
        () => {
          timers.delete(id);
          tick();
        },
        Math.max(0, at - clock.now() + 1),
      );
      id?.unref?.();
      timers.add(id);
    }
  }

  /**
   * Sends the webhooks that are due: Created for jobs that have started, the end webhook for
   * jobs that have ended (or are within `webhookLeadMs` of their natural end: the webhook then
   * comes before the API's status says so). Each once per job.
   */
  function tick() {
    const now = clock.now();
    for (const job of jobs.values()) notify(job, now);
    v4.tick();
  }

  /** Created once the job has started ("when a job starts and the first task launches"), then its end. */
  function notify(job, now) {
    if (job.webhookSent) return;
    if (!job.createdSent && now >= job.startsAt) {
      job.createdSent = true;
      if (webhook) sendWebhook(job, "created", null);
    }
    const state = jobState(job, now);
    const early = job.spec.webhookLeadMs > 0 && !job.forced && now >= endNoticeAt(job);
    if (!isTerminal(state.status) && !early) return;
    job.webhookSent = true;
    // An early webhook announces the outcome the run is heading for.
    const ending = isTerminal(state.status) ? state : jobState(job, describeJob(job, state).endsAt);
    const ok = isSuccess(ending.status);
    if (webhook) sendWebhook(job, ok ? "succeeded" : "failed", ok ? null : (ending.errorMessage ?? `Job ${ending.status}`));
  }

  /** POSTs one webhook (Created, Succeeded or Failed) unless the target left that event out. */
  function sendWebhook(job, event, error) {
    if (!webhookEvents.has(event)) return;
    const payload = {
      uid: seededUid(uidRandom),
      job_uid: job.uid,
      message: WEBHOOK_MESSAGES[event],
      project_uid: projectId,
      error,
      recipe_ref: null,
      workflow_uid: job.workflowUid,
      workflow_name: "Simulated workflow",
      job_name: job.name,
    };
    const record = { t: clock.now(), jobUid: job.uid, event, payload, status: null, error: null };
    webhookLog.push(record);
    const sent = fetch(webhook.url, {
      method: "POST",
      // A connection per webhook, as a webhook sender opens: a kept-alive one could have been
      // closed by the receiver meanwhile (workerd after 5 s idle). Browsers drop the header.
      headers: { "content-type": "application/json", connection: "close", ...webhook.headers },
      body: JSON.stringify(payload),
    })
      .then(async (res) => {
        record.status = res.status;
        await res.arrayBuffer();
      })
      .catch((e) => {
        record.error = String(e?.message ?? e);
      })
      .finally(() => {
        pendingWebhooks.delete(sent);
        changed();
      });
    pendingWebhooks.add(sent);
    changed();
  }

  function lookup(jobUid) {
    const job = jobs.get(jobUid);
    if (!job) throw new TypeError(`No simulated job ${jobUid}`);
    return job;
  }

  function job(jobUid) {
    const j = lookup(jobUid);
    return describeJob(j, jobState(j, clock.now()));
  }

  function finish(jobUid, status = "finished") {
    forceEnd(lookup(jobUid), clock.now(), status, false);
    tick();
    return job(jobUid);
  }

  /** Starts a pending job now (a test's command instead of a guessed `startDelayMs`). */
  function start(jobUid) {
    const j = lookup(jobUid);
    const wasPending = clock.now() < j.startsAt;
    startNow(j, clock.now());
    tick();
    if (wasPending) watchForEnd(j); // the end comes earlier now; each webhook is still sent once
    return job(jobUid);
  }

  function stop(jobUid) {
    forceEnd(lookup(jobUid), clock.now(), "stopped", true);
    tick();
    return job(jobUid);
  }

  function stats(jobUid) {
    const entries = jobUid ? log.filter((e) => e.jobUid === jobUid) : log;
    const requests = Object.fromEntries([...KINDS, "total"].map((k) => [k, 0]));
    const bytes = { ...requests };
    for (const e of entries) {
      requests[e.kind] += 1;
      bytes[e.kind] += e.bytes;
      // Preflights are counted apart: they only exist in browsers and are not API calls.
      if (e.kind !== "preflight") {
        requests.total += 1;
        bytes.total += e.bytes;
      }
    }
    return { requests, bytes, log: entries.map((e) => ({ ...e })) };
  }

  /**
   * What a naive loop would have cost on this job's timeline: every `intervalMs` from the
   * job's creation until it ends, one status read plus every results page from page 1.
   */
  function naiveCost(jobUid, { intervalMs = 10000, origin = "http://127.0.0.1" } = {}) {
    const j = lookup(jobUid);
    let requests = 0;
    let bytes = 0;
    let ticks = 0;
    for (let t = j.createdAt; ; t += intervalMs) {
      const state = jobState(j, t);
      ticks += 1;
      requests += 1;
      bytes += encoder.encode(JSON.stringify(runBody(j, state))).length;
      if (state.errorMessage === ALL_INPUTS_FAILED) break;
      for (let index = 0; ; index++) {
        const body = resultsBody(j, state, index, { origin, path: `${BASE}/jobs/${j.uid}/results` });
        requests += 1;
        bytes += encoder.encode(JSON.stringify(body)).length;
        if (!body.paging.have_next_page) break;
      }
      if (isTerminal(state.status)) break;
    }
    return { requests, bytes, ticks, intervalMs };
  }

  function reset() {
    for (const id of timers) clearTimeout(id);
    timers.clear();
    v4.reset();
    jobs.clear();
    log = [];
    answeredAt.clear();
    webhookLog = [];
    uidRandom = seededRandom(seed);
  }

  /** An error answer: `{message}` (v3) or the v1/v4 body. */
  function problem(status, message, { shape = errorShape, scope = "api", headers = {} } = {}) {
    if (shape !== "v4") return json(status, { message }, headers);
    const label = message === ALL_INPUTS_FAILED ? "ALL_INPUTS_FAILED" : (ERROR_LABELS[status] ?? "ERROR");
    const body = {
      error_label: label,
      error_scope: scope,
      error_ref: `sim-${log.length}`,
      message,
      status_code: status,
      params: {},
    };
    return json(status, body, headers);
  }

  function checkAuth(request) {
    if (request.headers.get("authorization") !== `x-api-key ${apiKey}`) {
      return problem(401, "Unauthorized", { scope: "auth" });
    }
    if (request.headers.get("x-project-id") !== projectId) return problem(403, "Forbidden: wrong project", { scope: "auth" });
    return null;
  }

  async function schedule(request, route, entry) {
    let body;
    try {
      body = await request.json();
    } catch {
      return problem(400, "Request body must be JSON", { scope: "input" });
    }
    if (!body || !Array.isArray(body.inputs) || body.inputs.length === 0) {
      return problem(400, "`inputs` is required and must be a non-empty array", { scope: "input" });
    }
    if (body.job_name !== undefined && typeof body.job_name !== "string") {
      return problem(400, "`job_name` must be a string", { scope: "input" });
    }
    const { jobUid } = createJob({ inputs: body.inputs.length, name: body.job_name, workflowUid: route.workflowUid });
    entry.jobUid = jobUid;
    return json(200, { message: "Bot successfully scheduled.", job_uid: jobUid, workflow: { uid: route.workflowUid } });
  }

  function normalAnswer(j, route, url, at = clock.now()) {
    const state = jobState(j, at);
    const shape = j.spec.errorShape ?? errorShape;
    if (route.kind === "run") return json(200, runBody(j, state));
    if (state.errorMessage === ALL_INPUTS_FAILED) return problem(400, ALL_INPUTS_FAILED, { shape, scope: "job" });
    if (state.status === "pending" && j.spec.resultsWhilePending === 404) {
      return problem(404, "No results for this job yet", { shape, scope: "results" });
    }
    // `page` counts from the job's pageBase (1 by default); no parameter is the first page.
    const pageParam = url.searchParams.get("page");
    const { pageBase } = j.spec;
    const page = pageParam === null ? pageBase : Number(pageParam);
    if (pageParam === "" || !Number.isInteger(page) || page < pageBase) {
      return problem(400, `\`page\` must be an integer ≥ ${pageBase}`, { shape, scope: "results" });
    }
    const path = `${BASE}/jobs/${encodeURIComponent(j.uid)}/results`;
    const body = resultsBody(j, state, page - pageBase, { origin: url.origin, path });
    const { hostile, hostileFrom, hostileBytes, hostileDepth } = j.spec;
    if (hostile && page - pageBase >= hostileFrom) {
      return hostileAnswer(hostile, body, { bytes: hostileBytes, depth: hostileDepth, jobUid: j.uid });
    }
    return json(200, body);
  }

  /** `Retry-After` and, with `faults.rateLimitReset`, `X-RateLimit-Reset` (seconds or a Unix time). */
  function rateLimitHeaders(retryAfter, reset) {
    const headers = {};
    if (retryAfter === "date") headers["retry-after"] = new Date(clock.now() + 1000).toUTCString();
    else if (typeof retryAfter === "number") headers["retry-after"] = String(retryAfter);
    const seconds = typeof retryAfter === "number" ? retryAfter : 1;
    if (reset === "delta") headers["x-ratelimit-reset"] = String(seconds);
    if (reset === "epoch") headers["x-ratelimit-reset"] = String(Math.ceil(clock.now() / 1000) + seconds);
    return headers;
  }

  /**
   * The answer an injected fault gives (429, 5xx; a drop throws; "slow" waits first), or null
   * when the request is to be answered normally. Shared by v3 and v4 requests.
   */
  async function faultAnswer(fault, request, shape, entry, rateLimitReset = null) {
    // The log says which answers were injected faults (chaos campaigns count them).
    if (fault.respond !== null) entry.fault = String(fault.respond);
    else if (fault.delayMs > 0) entry.fault = "slow";
    if (fault.delayMs > 0) await sleep(fault.delayMs, request.signal);
    if (fault.respond === "drop") throw new SimulatedDrop();
    if (fault.respond === 429) {
      const headers = rateLimitHeaders(fault.retryAfter, rateLimitReset);
      return problem(429, "Too Many Requests", { shape, scope: "rate_limit", headers });
    }
    if (typeof fault.respond === "number") return problem(fault.respond, "Internal Server Error", { shape, scope: "server" });
    return null;
  }

  async function jobAnswer(request, route, url, entry) {
    const j = jobs.get(route.jobUid);
    if (!j) return problem(404, "Job not found", { scope: "job" });
    const shape = j.spec.errorShape ?? errorShape;
    if (j.faults.wrongCredentials) return problem(401, "Unauthorized", { shape, scope: "auth" });
    const fault = j.faults.decide(route.kind);
    const faulty = await faultAnswer(fault, request, shape, entry, j.faults.rateLimitReset);
    if (faulty) return faulty;
    const answer = normalAnswer(j, route, url);
    if (fault.respond === "malformed" && answer.status === 200) {
      return { ...answer, text: answer.text.slice(0, Math.max(1, Math.floor(answer.text.length / 2))) };
    }
    return answer;
  }

  /**
   * A bench's replay (REPLAY_HEADER): the normal answer as of the last logged request of the
   * same URL (a replay made a while after it reads the same rows), no fault, nothing logged.
   */
  function replayAnswer(request, route, url) {
    const j = jobs.get(route.jobUid);
    const at = answeredAt.get(url.pathname + url.search);
    return checkAuth(request) ?? (j ? normalAnswer(j, route, url, at) : problem(404, "Job not found", { scope: "job" }));
  }

  async function apiAnswer(request, route, url, entry) {
    if (url.pathname.startsWith(`${V4_BASE}/`)) {
      return v4.answer(request, route, url, entry, (fault, req, shape) => faultAnswer(fault, req, shape, entry));
    }
    if (route.kind === "other") return problem(404, "Not found");
    if (!route.allowed) return problem(405, "Method not allowed", { headers: { allow: route.method } });
    const denied = checkAuth(request);
    if (denied) return denied;
    if (route.kind === "schedule") return schedule(request, route, entry);
    return jobAnswer(request, route, url, entry);
  }

  async function control(request, url) {
    const parts = url.pathname.split("/").slice(2).map(decodeURIComponent);
    const body = request.method === "POST" ? await request.text() : "";
    const input = body ? JSON.parse(body) : {};
    const [what, uid, action] = parts;
    if (what === "reset" && request.method === "POST") return (reset(), json(200, { ok: true }));
    if (what === "stats") return json(200, stats(url.searchParams.get("job") ?? undefined));
    if (what === "webhooks") return json(200, webhookLog);
    if (what === "v4") return v4.control(request.method, parts.slice(1), url);
    if (what !== "jobs") return json(404, { message: "Unknown control route" });
    if (!uid && request.method === "POST") {
      const { jobUid } = createJob(input);
      return json(201, job(jobUid));
    }
    if (!jobs.has(uid)) return json(404, { message: "Job not found" });
    if (!action) return json(200, job(uid));
    if (action === "finish" && request.method === "POST") return json(200, finish(uid, input.status));
    if (action === "stop" && request.method === "POST") return json(200, stop(uid));
    if (action === "start" && request.method === "POST") return json(200, start(uid));
    if (action === "naive")
      return json(
        200,
        naiveCost(uid, { intervalMs: Number(url.searchParams.get("intervalMs") ?? 10000), origin: url.origin }),
      );
    return json(404, { message: "Unknown control route" });
  }

  async function controlAnswer(request, url) {
    try {
      return await control(request, url);
    } catch (e) {
      if (e instanceof TypeError || e instanceof SyntaxError) return json(400, { message: e.message });
      throw e;
    }
  }

  /** A CORS preflight. With `cors: false` (or an origin not listed) it is refused like a server without CORS. */
  function preflight(request, entry, allowed = true) {
    entry.kind = "preflight";
    if (!allowed) return problem(405, "Method not allowed", { headers: { allow: "GET, POST" } });
    const asked = request.headers.get("access-control-request-headers");
    return {
      status: 204,
      text: "",
      headers: {
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": asked ? `${PREFLIGHT_HEADERS}, ${asked}` : PREFLIGHT_HEADERS,
        "access-control-max-age": "600",
      },
    };
  }

  /**
   * Answers one request like the Captain Data v3 API would (plus `/__sim/*` control routes).
   * Rejects with a TypeError when the fault plan drops the connection or the request is aborted.
   * @param {Request} request
   * @returns {Promise<Response>}
   */
  async function handle(request) {
    const url = new URL(request.url);
    tick();
    if (url.pathname.startsWith("/__sim/")) {
      // Control routes are not API traffic: answered (preflights too, whatever `cors` says) but not logged.
      const open = corsHeaders(true, null);
      if (request.method === "OPTIONS") return toResponse(preflight(request, {}), open);
      return toResponse(await controlAnswer(request, url), open);
    }
    const corsAnswer = corsHeaders(cors, request.headers.get("origin"));
    const route = matchRoute(request.method, url.pathname);
    if (request.headers.get(REPLAY_HEADER) === "1" && ["run", "results"].includes(route.kind) && route.allowed) {
      return toResponse(replayAnswer(request, route, url), corsAnswer);
    }
    /** @type {LogEntry} */
    const entry = {
      seq: log.length,
      t: clock.now(),
      method: request.method,
      path: url.pathname + url.search,
      kind: route.kind,
      status: null,
      bytes: 0,
      jobUid: route.jobUid ?? route.runUid ?? null,
    };
    log.push(entry);
    answeredAt.set(entry.path, entry.t);
    changed();
    try {
      const answer =
        request.method === "OPTIONS"
          ? preflight(request, entry, "access-control-allow-origin" in corsAnswer)
          : await apiAnswer(request, route, url, entry);
      entry.status = answer.status;
      entry.bytes = encoder.encode(answer.text).length;
      return toResponse(answer, corsAnswer);
    } catch (e) {
      entry.status = 0;
      entry.error = e?.simDrop ? "dropped" : "aborted";
      throw e;
    } finally {
      changed();
    }
  }

  return {
    handle,
    createJob,
    job,
    stats,
    finish,
    start,
    stop,
    tick,
    reset,
    naiveCost,
    /** Webhooks sent so far: `{ t, jobUid, payload, status, error }`. */
    webhooks: () => webhookLog.map((w) => ({ ...w })),
    /** Resolves when every webhook POST in flight has settled. */
    webhooksSettled: () => Promise.all([...pendingWebhooks]),
    until,
    /** The v4 async API: launch, runs, deliveries, callbacks POSTed (sim/README.md, "Captain Data v4"). */
    v4: {
      launch: v4.launch,
      setDefaults: v4.setDefaults,
      run: v4.run,
      runs: v4.runs,
      stop: v4.stop,
      isOver: v4.isOver,
      deliveries: v4.deliveries,
      callbacks: v4.callbacks,
      receiverDown: v4.receiverDown,
      settled: v4.settled,
    },
    /** Clears timers; the simulator keeps answering. */
    dispose() {
      for (const id of timers) clearTimeout(id);
      timers.clear();
      v4.dispose();
    },
    options: { apiKey, projectId, seed, basePath: BASE, errorShape, cors },
  };
}
