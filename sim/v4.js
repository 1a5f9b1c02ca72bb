// The simulated Captain Data v4 async API, beside v3 (sim/index.js routes `/v4/…` here):
// launch with a callback, the run's status, its callback deliveries and their replay.
import { seededRandom, seededUid } from "./random.js";
import { createDeliveries, validateV4Faults } from "./v4-callbacks.js";
import { createV4Run, describeV4Run, isV4Terminal, stopV4Run, v4RunBody } from "./v4-runs.js";

export const V4_BASE = "/v4";
export const V4_KINDS = ["v4-launch", "v4-run", "v4-callbacks", "v4-callback", "v4-replay"];
export const MAX_INPUTS = 100_000;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
const WORKSPACE_UID = "sim-workspace";

/** Splits `/v4/...` into a route (segments decoded), or `{ kind: "other" }`. */
export function matchV4Route(method, pathname) {
  let parts;
  try {
    parts = pathname
      .slice(V4_BASE.length + 1)
      .split("/")
      .map(decodeURIComponent);
  } catch {
    return { kind: "other" };
  }
  const [a, b, c, d] = parts;
  const n = parts.length;
  let route = null;
  if (a === "actions" && n === 3 && c === "async") route = { kind: "v4-launch", action: b, method: "POST" };
  else if (a === "runs" && b === "callbacks" && n === 2) route = { kind: "v4-callbacks", method: "GET" };
  else if (a === "runs" && b === "callbacks" && n === 3) route = { kind: "v4-callback", deliveryUid: c, method: "GET" };
  else if (a === "runs" && b === "callbacks" && n === 4 && d === "replay") route = { kind: "v4-replay", deliveryUid: c, method: "POST" };
  else if (a === "runs" && n === 2) route = { kind: "v4-run", runUid: b, method: "GET" };
  if (!route || parts.slice(1).some((p) => p === "")) return { kind: "other" };
  return { ...route, allowed: route.method === method };
}

/** `callback.url`: https, or http on loopback only (the simulator's receivers are local). */
function callbackUrlProblem(raw) {
  if (typeof raw !== "string") return "`callback.url` is required and must be a string";
  let url;
  try {
    url = new URL(raw);
  } catch {
    return "`callback.url` must be an absolute URL";
  }
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return null;
  return "`callback.url` must be HTTPS";
}

/** `callback.headers`: an object of strings, or an array of `{ name, value }` (the docs say "array"). */
function callbackHeaders(raw) {
  if (raw === undefined || raw === null) return {};
  const pairs = Array.isArray(raw) ? raw.map((h) => [h?.name ?? h?.key, h?.value]) : typeof raw === "object" ? Object.entries(raw) : null;
  if (!pairs || pairs.some(([k, v]) => typeof k !== "string" || k === "" || typeof v !== "string")) return null;
  return Object.fromEntries(pairs);
}

/** A JSON answer in the simulator's `{ status, text, headers }` form. */
function json(status, body, headers = {}) {
  return { status, text: JSON.stringify(body), headers };
}

/**
 * The v4 part of one simulator. `faultAnswer(fault)` (sim/index.js) turns an injected fault of
 * the v3 fault plan into its answer (or null), the same way for v3 and v4 requests.
 * @param {{ apiKey: string, clock: { now(): number }, usesWallClock: boolean, seed: number,
 *   defaults: import("./v4-runs.js").V4RunSpec, changed: () => void }} options
 */
export function createV4({ apiKey, clock, usesWallClock, seed, defaults, changed }) {
  let uidRandom = seededRandom((seed ^ 0x5eed4444) >>> 0);
  let launchDefaults = { ...defaults };
  /** @type {Map<string, ReturnType<typeof createV4Run>>} */
  const runs = new Map();
  const timers = new Set();
  let errors = 0;

  /** The v4 error body: `{error_label, error_scope, error_ref, message, status_code, params}`. */
  function problem(status, label, message, scope, headers = {}) {
    errors += 1;
    const body = { error_label: label, error_scope: scope, error_ref: `sim-v4-${errors}`, message, status_code: status, params: {} };
    return json(status, body, headers);
  }

  // With the wall clock a timer sends what is due; with a manual clock, tick() (on every request) does.
  function wake(at) {
    if (!usesWallClock) return;
    const id = setTimeout(
      () => {
        timers.delete(id);
        deliveries.send();
      },
      Math.max(0, at - clock.now() + 1),
    );
    id?.unref?.();
    timers.add(id);
  }

  const deliveries = createDeliveries({ clock, uid: () => seededUid(uidRandom), changed, wake, workspaceUid: WORKSPACE_UID, seed });

  /**
   * Launches a run as `POST /v4/actions/{action}/async` does (tests may call it directly).
   * @param {{ action?: string, inputs?: unknown[], customData?: unknown, callback: { url: string, headers?: Record<string, string> },
   *   spec?: import("./v4-runs.js").V4RunSpec }} launch
   */
  function launch({ action = "sim-action", inputs = [{}], customData = null, callback, spec = {} }) {
    const problem = callbackUrlProblem(callback?.url);
    if (problem) throw new TypeError(problem);
    const headers = callbackHeaders(callback.headers);
    if (!headers) throw new TypeError("`callback.headers` must be an object of strings or an array of { name, value }");
    const merged = { ...launchDefaults, ...spec, faults: spec.faults ?? launchDefaults.faults ?? {} };
    validateV4Faults(merged.faults);
    const uid = seededUid(uidRandom);
    const run = createV4Run(uid, merged, { action, inputs, customData, callback: { url: callback.url, headers } }, clock.now(), seed, () =>
      seededUid(uidRandom),
    );
    runs.set(uid, run);
    deliveries.plan(run);
    deliveries.send();
    return { runUid: uid };
  }

  function lookup(runUid) {
    const run = runs.get(runUid);
    if (!run) throw new TypeError(`No simulated v4 run ${runUid}`);
    return run;
  }

  async function launchAnswer(request, route, entry) {
    let body;
    try {
      body = await request.json();
    } catch {
      return problem(400, "BAD_REQUEST", "Request body must be JSON", "input");
    }
    if (!body || typeof body !== "object" || Array.isArray(body)) return problem(400, "BAD_REQUEST", "Request body must be a JSON object", "input");
    const { inputs } = body;
    if (!Array.isArray(inputs) || inputs.length === 0) return problem(400, "BAD_REQUEST", "`inputs` is required and must be a non-empty array", "input");
    if (inputs.length > MAX_INPUTS) return problem(400, "BAD_REQUEST", `\`inputs\` holds at most ${MAX_INPUTS.toLocaleString("en-US")} inputs`, "input");
    if (!body.callback || typeof body.callback !== "object") return problem(400, "BAD_REQUEST", "`callback` is required in async mode", "input");
    const urlProblem = callbackUrlProblem(body.callback.url);
    if (urlProblem) return problem(400, "BAD_REQUEST", urlProblem, "input");
    if (!callbackHeaders(body.callback.headers)) return problem(400, "BAD_REQUEST", "`callback.headers` must be name/value pairs of strings", "input");
    const { runUid } = launch({ action: route.action, inputs, customData: body.custom_data ?? null, callback: body.callback });
    entry.jobUid = runUid;
    return json(201, { run_uid: runUid, status: "CREATED", execution_mode: "ASYNC", action_name: route.action, created_at: new Date(clock.now()).toISOString() });
  }

  function listAnswer(url) {
    const q = (name) => url.searchParams.get(name);
    const { items } = deliveries.list({ runUid: q("run_uid"), status: q("status"), limit: q("limit"), offset: q("offset"), sort: q("sort") });
    return json(200, items);
  }

  /** The answer to one `/v4/…` request (authenticated here: `X-API-Key`). */
  async function answer(request, route, url, entry, faultAnswer) {
    if (route.kind === "other") return problem(404, "NOT_FOUND", "Not found", "api");
    if (!route.allowed) return problem(405, "METHOD_NOT_ALLOWED", "Method not allowed", "api", { allow: route.method });
    if (request.headers.get("x-api-key") !== apiKey) return problem(401, "UNAUTHORIZED", "Invalid or missing API key", "auth");
    try {
      if (route.kind === "v4-launch") return await launchAnswer(request, route, entry);
      if (route.kind === "v4-callbacks") return listAnswer(url);
      if (route.kind === "v4-callback") {
        const d = deliveries.get(route.deliveryUid);
        entry.jobUid = d?.run_uid ?? null;
        return d ? json(200, d) : problem(404, "NOT_FOUND", "Run callback not found", "callback");
      }
      if (route.kind === "v4-replay") {
        entry.jobUid = deliveries.get(route.deliveryUid)?.run_uid ?? null;
        return json(200, deliveries.replay(route.deliveryUid));
      }
      const run = runs.get(route.runUid);
      if (!run) return problem(404, "NOT_FOUND", "Run not found", "run");
      return await runAnswer(run, request, faultAnswer);
    } catch (e) {
      if (e && typeof e.status === "number" && e.label) return problem(e.status, e.label, e.message, "callback");
      throw e;
    }
  }

  /** `GET /v4/runs/{uid}`, through the run's own API fault plan (429, 5xx, drops: the v3 plan). */
  async function runAnswer(run, request, faultAnswer) {
    const faulty = await faultAnswer(run.apiFaults.decide("run"), request, "v4");
    if (faulty) return faulty;
    return json(200, v4RunBody(run, clock.now(), WORKSPACE_UID));
  }

  /** Stops a run now: the rows so far stay; its final callback (STOPPED) goes out. */
  function stop(runUid) {
    const run = lookup(runUid);
    const dropped = stopV4Run(run, clock.now());
    if (dropped) deliveries.replan(run, dropped);
    deliveries.send();
    return describeV4Run(run, clock.now());
  }

  return {
    answer,
    launch,
    /** Runs launched over HTTP from now on use this spec (merged over the simulator's `v4Defaults`). */
    setDefaults(spec) {
      launchDefaults = { ...defaults, ...spec };
    },
    run: (runUid) => describeV4Run(lookup(runUid), clock.now()),
    /** Every run uid, in launch order. */
    runs: () => [...runs.keys()],
    stop,
    isOver: (runUid) => isV4Terminal(describeV4Run(lookup(runUid), clock.now()).status),
    deliveries: (runUid) => deliveries.all(runUid),
    callbacks: (runUid) => deliveries.posts(runUid),
    receiverDown: (ms, from) => deliveries.receiverDown(ms, from),
    settled: () => deliveries.settled(),
    tick: () => deliveries.send(),
    /** `/__sim/v4/…` control routes (no auth): a run, its stop, deliveries and POSTs made. */
    control(method, parts, url) {
      const [what, uid, action] = parts;
      const runUid = url.searchParams.get("run") ?? undefined;
      if (what === "callbacks") return json(200, deliveries.posts(runUid));
      if (what === "deliveries") return json(200, deliveries.all(runUid));
      if (what !== "runs" || !uid) return json(404, { message: "Unknown control route" });
      if (!runs.has(uid)) return json(404, { message: "Run not found" });
      if (!action) return json(200, describeV4Run(runs.get(uid), clock.now()));
      if (action === "stop" && method === "POST") return json(200, stop(uid));
      return json(404, { message: "Unknown control route" });
    },
    reset() {
      for (const id of timers) clearTimeout(id);
      timers.clear();
      runs.clear();
      deliveries.reset();
      uidRandom = seededRandom((seed ^ 0x5eed4444) >>> 0);
      launchDefaults = { ...defaults };
    },
    dispose() {
      for (const id of timers) clearTimeout(id);
      timers.clear();
    },
  };
}
