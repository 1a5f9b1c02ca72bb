// Shared by the worker suites: the simulator on 127.0.0.1 as Captain Data, the worker in
// Miniflare (cf: false) whose outbound fetches are recorded and allowed only to the simulator.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import path from "node:path";
import { Miniflare } from "miniflare";
import { classifyStatus } from "../../js/rules.js";
import { startSimServer } from "../../sim/server.mjs";
import { until } from "../support/until.mjs";
import { LOCAL_SECRETS, miniflareOptions } from "../../worker/miniflare-options.mjs";

export const API_KEY = "sk_test_worker_R4n8T1zB7788";
export const PROJECT_ID = "sim-project";
export const SECRETS = { ...LOCAL_SECRETS, CAPTAINDATA_API_KEY: API_KEY, CAPTAINDATA_PROJECT_ID: PROJECT_ID };
const ADMIN = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
export const WEBHOOK_HEADERS = { "x-webhook-secret": SECRETS.WEBHOOK_SECRET };

/** Fast retries and back-off so faults cost milliseconds, not seconds. */
const FAST_BINDINGS = {
  RETRY_RETRIES: "8",
  RETRY_MIN_DELAY_MS: "5",
  RETRY_MAX_DELAY_MS: "40",
  REQUEST_TIMEOUT_MS: "3000",
  STEP_DEADLINE_MS: "5000",
  FAILED_STEP_BACKOFF_MS: "50",
};

export const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `["row-<from>", …]` */
export const rowIds = (n, from = 0) => Array.from({ length: n }, (_, i) => `row-${from + i}`);

/** Whether `port` on 127.0.0.1 is free to listen on now. */
function canListen(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** Below Linux's ephemeral range (32768–60999), from a block of this process's own. */
const FIRST_PORT = 20_000;
const LAST_PORT = 32_767;
let nextPort = FIRST_PORT + (process.pid % 500) * 20;

/**
 * A port for a worker, which `restart()` starts again on the same port. Taken below the
 * ephemeral range: there no `listen(0)` of a test running alongside (a simulator, Miniflare's
 * own sockets, another probe) can be handed the port in the moment it is free between the two
 * workerd processes, which failed a restart with "Address already in use".
 */
async function freePort() {
  for (let tried = 0; tried <= LAST_PORT - FIRST_PORT; tried++) {
    const port = nextPort;
    nextPort = nextPort >= LAST_PORT ? FIRST_PORT : nextPort + 1;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${FIRST_PORT} and ${LAST_PORT}`);
}

/**
 * Forwards the worker's fetches to the simulator; anything else is refused and recorded.
 * `hooks.intercept(request)` may answer a request in the simulator's place (a Response) first.
 */
function outboundTo(server, outbound, hooks) {
  return async (request) => {
    const url = new URL(request.url);
    const record = { url: request.url, step: request.headers.get("x-poller-step"), authorization: request.headers.get("authorization") };
    outbound.push(record);
    try {
      const replaced = await hooks.intercept?.(request);
      if (replaced) return replaced;
      if (url.origin !== server.origin) {
        record.refused = true;
        return new Response("outbound traffic outside the simulator is refused in tests", { status: 502 });
      }
      const body = ["GET", "HEAD"].includes(request.method) ? undefined : await request.arrayBuffer();
      return await server.sim.handle(new Request(request.url, { method: request.method, headers: request.headers, body }));
    } finally {
      record.answeredAt = Date.now();
      record.answered = true; // nothing in flight: see untilNoStepDue
    }
  };
}

/**
 * The modules of a worker `wrangler deploy --dry-run --outdir <dir>` bundled: its `index.js`
 * and the `.wasm` files next to it, compiled by workerd as wrangler's upload would have them.
 */
function deployedModules(dir) {
  return {
    modules: true,
    scriptPath: path.join(dir, "index.js"),
    modulesRoot: dir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
  };
}

/**
 * Starts the simulator and the worker.
 * @param {{ bindings?: Record<string, string>, sim?: object, persist?: string, deployed?: string }} [options]
 *   `persist`: a directory for the Durable Objects' storage, kept across `restart()`.
 *   `deployed`: run the bundle wrangler wrote in that directory instead of this repository's worker.
 */
export async function startWorker({ bindings = {}, sim = {}, persist, deployed } = {}) {
  const port = await freePort();
  const workerOrigin = `http://127.0.0.1:${port}`;
  const server = await startSimServer({
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    seed: 11,
    webhook: { url: `${workerOrigin}/webhooks/captaindata`, headers: WEBHOOK_HEADERS },
    ...sim,
  });
  const outbound = [];
  const hooks = {};
  const logs = [];
  const options = {
    ...(await miniflareOptions({
      baseUrl: server.url,
      port,
      outboundService: outboundTo(server, outbound, hooks),
      bindings: { ...SECRETS, ...FAST_BINDINGS, CAPTAINDATA_BASE_URL: server.url, ...bindings },
      onLine: (line) => logs.push(line),
    })),
    ...(persist ? { durableObjectsPersist: persist } : {}),
  };
  if (deployed) {
    delete options.modules;
    Object.assign(options, deployedModules(deployed));
  }
  const mf = new Miniflare(options);
  await mf.ready;
  return new WorkerHarness(mf, server, outbound, workerOrigin, hooks, options, logs);
}

// Miniflare reaches workerd over keep-alive connections that workerd closes when idle for 5 s;
// on a busy machine one can be closed just as it is reused. The request never arrived: sent again.
const STALE_CONNECTION = /other side closed|ECONNRESET|socket hang up/;

/**
 * `action()` (a call through Miniflare's proxy), tried again (twice at most) on a stale connection, its
 * failure named: Miniflare's own "fetch failed" says neither what nor why.
 */
async function named(what, action) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (e) {
      const why = `${e.cause?.code ?? ""} ${e.cause?.message ?? ""}`;
      if (attempt < 3 && STALE_CONNECTION.test(why)) continue; // the pool may hold more than one
      throw new Error(`${what}: ${e.message} (${why.trim() || "no cause"})`, { cause: e });
    }
  }
}

class WorkerHarness {
  /**
   * `hooks.intercept = (request) => Response | undefined` answers outbound requests in the simulator's place;
   * `logs` holds the worker's log lines (console.log/error in workerd).
   */
  constructor(mf, server, outbound, origin, hooks, options, logs) {
    Object.assign(this, { mf, server, sim: server.sim, outbound, origin, hooks, options, logs, responses: 0 });
  }

  /**
   * Stops workerd at once (steps in flight die with it, as in an eviction or a deploy) and starts
   * a new one on the same port and storage (`persist`). The simulator keeps running. `bindings`
   * changes settings for the new one, as a deploy with new settings would. `whileStopped()` runs
   * between the two (e.g. to change the persisted storage as a failure would leave it).
   */
  async restart(bindings = {}, { whileStopped } = {}) {
    await this.mf.dispose();
    await whileStopped?.();
    this.options = { ...this.options, bindings: { ...this.options.bindings, ...bindings } };
    this.mf = new Miniflare(this.options);
    await this.mf.ready;
  }

  /** A request to the worker over HTTP; every response is checked for the API key. */
  async call(path, init = {}) {
    let response;
    try {
      // One connection per request: workerd closes an idle keep-alive connection after 5 s and
      // fetch (undici) keeps one for 4 s, so on a busy machine a reused one can be closed already.
      response = await fetch(`${this.origin}${path}`, { ...init, headers: { ...init.headers, connection: "close" } });
    } catch (e) {
      // "fetch failed" alone hides why: name the socket error (ECONNRESET, ECONNREFUSED, …).
      throw new Error(`${init.method ?? "GET"} ${path}: ${e.message} (${e.cause?.code ?? e.cause?.message ?? "no cause"})`, { cause: e });
    }
    const text = await response.text();
    this.responses += 1;
    assert.ok(!text.includes(API_KEY), `the API key leaked in the body of ${path}`);
    for (const [name, value] of response.headers) assert.ok(!value.includes(API_KEY), `the API key leaked in header ${name}`);
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, headers: response.headers, body };
  }

  /** Tracks an existing run; resolves with its read token. */
  async track(jobUid) {
    const res = await this.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: ADMIN });
    assert.ok([200, 201].includes(res.status), `track: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.read_token;
  }

  schedule(workflowUid, body, headers = ADMIN) {
    return this.call(`/v3/workflows/${workflowUid}/schedule`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  }

  run(jobUid, token) {
    return this.call(`/v3/jobs/${jobUid}`, { headers: { "x-read-token": token } });
  }

  /** Every stored row of a run, following `paging.next` like a client would. */
  async rows(jobUid, token) {
    const rows = [];
    let url = `${this.origin}/v3/jobs/${jobUid}/results`;
    while (url) {
      const res = await this.call(url.slice(this.origin.length), { headers: { "x-read-token": token } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      rows.push(...res.body.results);
      url = res.body.paging.next;
    }
    return rows;
  }

  webhook(payload, headers = WEBHOOK_HEADERS) {
    return this.call("/webhooks/captaindata", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
  }

  /** One cron tick (`scheduled()`), as the cron trigger would fire it. */
  async tick() {
    const result = await named("tick", async () => (await this.mf.getWorker()).scheduled({ cron: "* * * * *" }));
    assert.equal(result.outcome, "ok");
  }

  /** The registry's counters: runs by state, kicks per alarm invocation. */
  registryStats() {
    return named("registry stats", async () => {
      const ns = await this.mf.getDurableObjectNamespace("REGISTRY");
      const stats = await ns.get(ns.idFromName("registry")).stats();
      return { active: stats.active, retired: stats.retired, kicksPerInvocation: [...stats.kicksPerInvocation] };
    });
  }

  /** What a run's Durable Object holds: its tables (sorted), rows and alarm. */
  runStorage(jobUid) {
    return named("run storage", async () => {
      const ns = await this.mf.getDurableObjectNamespace("RUNS");
      const data = await ns.get(ns.idFromName(jobUid)).storedData();
      return { tables: [...data.tables].sort(), rows: data.rows, alarm: data.alarm };
    });
  }

  /** Requests the worker sent for one run, grouped by step (one step = one invocation). */
  requestsPerStep(jobUid) {
    const steps = new Map();
    for (const r of this.outbound) {
      if (!r.step?.startsWith(`${jobUid}:`)) continue;
      steps.set(r.step, (steps.get(r.step) ?? 0) + 1);
    }
    return [...steps.values()];
  }

  /** Asserts no outbound request left for anywhere but the simulator, or held the key outside headers. */
  assertOutboundClean() {
    assert.deepEqual(this.outbound.filter((r) => r.refused).map((r) => r.url), []);
    assert.ok(this.outbound.every((r) => !r.url.includes(API_KEY)));
  }

  /**
   * Resolves with the run as a reader sees it once `check(body)` is true: e.g. the first step
   * committed (`status` no longer "pending"), or `row_count` reached what the simulator has.
   */
  untilRun(jobUid, token, check, what, options) {
    return this.until(
      async () => {
        const { body } = await this.run(jobUid, token);
        return check(body) && body;
      },
      `${jobUid}: ${what}`,
      options,
    );
  }

  /** Resolves once `check()` is truthy (asked every `everyMs`, tests/support/until.mjs); fails after `timeoutMs` with `what`. */
  until(check, what, { timeoutMs = 30000, everyMs = 50 } = {}) {
    return until(check, { everyMs, timeoutMs, what });
  }

  /**
   * Resolves once nothing can step the run until the test acts: its Durable Object has no alarm
   * due within the hour (none while it goes with POLL_INTERVAL_MS 0; the retention's once it
   * ended) and the worker has an answer to every request it sent. A step that a webhook or a tick
   * wrongly caused is an alarm or a request seen here, so a test asserts on that state instead of
   * on what an absence window happened to see.
   */
  untilNoStepDue(jobUid, what = "no step due") {
    return this.until(async () => {
      const { alarm } = await this.runStorage(jobUid);
      return (alarm === null || alarm > Date.now() + 3_600_000) && this.outbound.every((r) => r.answered);
    }, `${jobUid}: ${what}`);
  }

  /**
   * Waits for a run to end (or to be given up by the worker: "paused" with the worker's
   * message), ticking the cron meanwhile when `ticking`.
   */
  untilDone(jobUid, token, { ticking = true, timeoutMs = 30000, everyMs = 100 } = {}) {
    let last = {};
    const over = async () => {
      const { body } = await this.run(jobUid, token);
      last = body;
      if (["succeeded", "failed"].includes(classifyStatus(body.status))) return body;
      if (body.status === "paused" && /stopped polling this run/.test(body.error_message ?? "")) return body;
      if (ticking) await this.tick();
      return null;
    };
    return until(over, { everyMs, timeoutMs, what: `run ${jobUid} to end`, detail: () => `still ${last.status} with ${last.row_count} rows` });
  }

  async close() {
    await this.mf.dispose();
    await this.server.close();
  }
}
