// The Cloudflare Worker: routes (schedule, track, v3 reads, revoke, delete, webhook) and the cron tick.
import { scheduleWorkflow } from "captaindata-poller";
import { bearer, checkSignature, cors, preflightHeaders, READ_TOKEN_HEADER, readToken, readTokenClaims, sameSecret, TOKEN_REFUSED } from "./access.js";
import { readBody } from "./body.js";
import { ConfigError, MAX_READ_TOKEN_TTL_SECONDS, connection, redacted, refusedSetting, secret, settings } from "./config.js";
import { trackedRunsCapBody } from "./limits.js";
import { registryOf, trackerOf } from "./registry.js";
import { isRunId, route } from "./routes.js";
import { advertiseStream, forwardStream, streamToken } from "./stream.js";
import { launchV4, receiveV4Callback } from "./v4-routes.js";
import { v4Problems } from "./v4-settings.js";
import { webhookEvent } from "./webhook-events.js";

export { Registry } from "./registry.js";
export { RunTracker } from "./run-tracker.js";

const WEBHOOK_HEADER = "x-webhook-secret";
const SIGNATURE_HEADER = "x-webhook-signature";
const MAX_BODY_BYTES = 1 << 20;
const decoder = new TextDecoder();

// On every answer: rows are personal data (no cache keeps them), and JSON is never sniffed as HTML.
const ANSWER_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" };

function json(status, body, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

const problem = (status, message) => json(status, { message });

/** The JSON in `bytes`; an empty body is `empty` when given. */
function parseJson(bytes, empty) {
  if (bytes.length === 0 && empty !== undefined) return { body: empty };
  try {
    return { body: JSON.parse(decoder.decode(bytes)) };
  } catch {
    return { error: problem(400, "Body must be JSON") };
  }
}

/** The request's JSON body, at most MAX_BODY_BYTES bytes (UTF-8 bytes, not UTF-16 units). */
async function readJson(request, empty) {
  const { bytes, tooLarge } = await readBody(request, MAX_BODY_BYTES);
  if (tooLarge) return { error: tooLargeAnswer() };
  return parseJson(bytes, empty);
}

const tooLargeAnswer = () => problem(413, `Body too large: at most ${MAX_BODY_BYTES} bytes`);
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Starts tracking a run: registry first, so a run that is stepping is always swept too. A new
 * run is refused when MAX_TRACKED_RUNS are stored, unless `force` (it was launched already).
 * The read token lives `ttlSeconds`.
 */
async function track(env, jobUid, info, { ttlSeconds, force = false }) {
  const tokenSecret = secret(env, "READ_TOKEN_SECRET");
  const { maxTrackedRuns } = settings(env);
  if ((await registryOf(env).add(jobUid, maxTrackedRuns, force)) === "full") return { full: trackedRunsCapBody(maxTrackedRuns) };
  const { created, resumed, epoch } = await trackerOf(env, jobUid).track(jobUid, info);
  const expiresAt = Math.floor(Date.now() / 1000 + ttlSeconds) * 1000;
  const token = await readToken(tokenSecret, jobUid, { epoch, expiresAt });
  return { tracked: { job_uid: jobUid, read_token: token, read_token_expires_at: new Date(expiresAt).toISOString(), created, resumed } };
}

async function schedule(request, env, workflowUid) {
  const { body, error } = await readJson(request);
  if (error) return error;
  if (!isObject(body)) return problem(400, "Body must be a JSON object");
  // Checked before the launch: a run launched is always tracked (a launch racing for the last
  // place can pass the cap by a few runs, never leave a run unstored).
  const { maxTrackedRuns, readTokenTtlSeconds } = settings(env);
  if (!(await registryOf(env).hasRoom(maxTrackedRuns))) return json(409, trackedRunsCapBody(maxTrackedRuns));
  let launched;
  try {
    launched = await scheduleWorkflow(connection(env), workflowUid, body);
  } catch (e) {
    // A refused option is a setting (its message may quote the value: the project id).
    if (e?.name === "TypeError") throw refusedSetting(e);
    // Captain Data's own 4xx message is passed on (without any secret); the rest is a 502.
    const status = e?.status >= 400 && e?.status < 500 && e.code !== "UNAUTHORIZED" ? e.status : 502;
    return json(status, { message: redacted(env, e?.message ?? "schedule failed"), code: e?.code ?? "BAD_RESPONSE" });
  }
  // The uid names a Durable Object and goes into upstream URLs: only a well-formed one is tracked.
  if (!isRunId(launched.jobUid)) {
    console.error("schedule: Captain Data answered without a valid job_uid; nothing tracked");
    return json(502, { message: "Captain Data answered without a valid job_uid", code: "BAD_RESPONSE" });
  }
  const name = typeof body.job_name === "string" ? body.job_name : null;
  const { tracked } = await track(env, launched.jobUid, { name, workflowUid }, { ttlSeconds: readTokenTtlSeconds, force: true });
  return json(201, { message: launched.message, workflow: launched.workflow, ...tracked });
}

/** The read token's life asked in a /track body (`expires_in`, seconds), or the default. */
function tokenTtl(body, env) {
  const asked = body.expires_in;
  if (asked === undefined || asked === null) return { ttlSeconds: settings(env).readTokenTtlSeconds };
  if (Number.isInteger(asked) && asked >= 1 && asked <= MAX_READ_TOKEN_TTL_SECONDS) return { ttlSeconds: asked };
  return { error: problem(400, `\`expires_in\` must be a whole number of seconds from 1 to ${MAX_READ_TOKEN_TTL_SECONDS}`) };
}

/** Tracks a run, or resumes one that ended in an error (e.g. given up after failed steps). */
async function trackExisting(request, env, jobUid) {
  const { body, error } = await readJson(request, {});
  if (error) return error;
  if (!isObject(body)) return problem(400, "Body must be a JSON object");
  const ttl = tokenTtl(body, env);
  if (ttl.error) return ttl.error;
  const { tracked, full } = await track(env, jobUid, {}, ttl);
  if (full) return json(409, full);
  return json(tracked.created ? 201 : 200, tracked);
}

/** Revokes the run's read tokens issued so far; tracking it again issues new ones. */
async function revoke(env, jobUid) {
  if (!(await trackerOf(env, jobUid).revoke())) return problem(404, "Job not found");
  return json(200, { job_uid: jobUid, revoked: true });
}

/** Deletes a run's rows and state now (the registry first: no sweep kicks it meanwhile). */
async function deleteRun(env, jobUid) {
  await registryOf(env).remove(jobUid);
  if (!(await trackerOf(env, jobUid).erase())) return problem(404, "Job not found");
  return json(200, { job_uid: jobUid, deleted: true });
}

/** A reader's answer from what the RunTracker said: a body, a revoked token, or no run. */
function readAnswer(view, send) {
  if (view.refused) return problem(403, TOKEN_REFUSED);
  if (view.missing) return problem(404, "Job not found");
  return send(view.body);
}

async function readRun(env, jobUid, claims) {
  return readAnswer(await trackerOf(env, jobUid).runView(claims.epoch), (body) => json(200, body));
}

async function readResults(env, jobUid, url, claims) {
  const raw = url.searchParams.get("page");
  const page = raw === null ? 1 : Number(raw);
  if (!Number.isSafeInteger(page) || page < 1) return problem(400, "`page` must be an integer ≥ 1");
  const resultsUrl = `${url.origin}/v3/jobs/${jobUid}/results`;
  const view = await trackerOf(env, jobUid).resultsPage(page, settings(env).pageSize, resultsUrl, claims.epoch);
  return readAnswer(view, (body) => new Response(body, { headers: { "content-type": "application/json" } }));
}

/**
 * Captain Data's webhook: the header secret first (before the body is read), then, when
 * WEBHOOK_SIGNING_SECRET is set, the signature over the body as received.
 */
async function webhook(request, env) {
  if (!(await sameSecret(request.headers.get(WEBHOOK_HEADER), secret(env, "WEBHOOK_SECRET")))) return problem(401, "Bad webhook secret");
  const { bytes, tooLarge } = await readBody(request, MAX_BODY_BYTES);
  if (tooLarge) return tooLargeAnswer();
  const signing = env.WEBHOOK_SIGNING_SECRET;
  if (signing && !(await checkSignature(String(signing), bytes, request.headers.get(SIGNATURE_HEADER)))) {
    return problem(401, "Bad webhook signature");
  }
  const { body, error } = parseJson(bytes);
  if (error) return error;
  const jobUid = body?.job_uid;
  if (!isRunId(jobUid)) return problem(400, "`job_uid` is missing or invalid");
  // Created and unknown events are acknowledged (so Captain Data does not retry) and change nothing.
  const event = webhookEvent(body);
  if (event === null) return json(200, { job_uid: jobUid, state: "ignored" });
  // An end event is a hint to step now; the run ends when the API's own status says so. The
  // body goes to pollStep as received: the package classifies it again, the same way.
  const state = await trackerOf(env, jobUid).webhook(body, settings(env).webhookMinGapMs);
  // An untracked, finished or throttled run is acknowledged too, so Captain Data does not retry it.
  return json(state === "accepted" ? 202 : 200, { job_uid: jobUid, state });
}

/** Configuration problems for operators: 200 when there are none, 503 with the list otherwise. */
function health(env) {
  const problems = [...settings(env).problems, ...v4Problems(env)].map(({ setting, message, polling }) => ({ setting, message, stops_polling: polling }));
  return json(problems.length === 0 ? 200 : 503, { ok: problems.length === 0, problems });
}

/**
 * Whether the caller may use the route; a reader's token claims (its run's token epoch) go on
 * to the RunTracker, which refuses a revoked one.
 * @returns {Promise<{ ok: boolean, claims?: { epoch: string, expiresAt: number } }>}
 */
async function authorize(request, env, match) {
  if (match.access === "admin") return { ok: await isAdmin(request, env, true) };
  if (match.access === "read") {
    // A browser cannot set headers on a WebSocket: the stream's token comes as a subprotocol.
    const token = match.name === "stream" ? streamToken(request) : request.headers.get(READ_TOKEN_HEADER);
    const claims = await readTokenClaims(secret(env, "READ_TOKEN_SECRET"), match.jobUid, token, Date.now());
    return { ok: claims !== null, claims };
  }
  return { ok: true };
}

/** Whether the request carries the admin token; `required`: a missing ADMIN_TOKEN is a fault. */
function isAdmin(request, env, required) {
  const expected = required ? secret(env, "ADMIN_TOKEN") : env.ADMIN_TOKEN;
  return sameSecret(bearer(request), expected);
}

async function dispatch(request, env, match, url, claims) {
  switch (match.name) {
    case "schedule":
      return schedule(request, env, match.workflowUid);
    case "track":
      return trackExisting(request, env, match.jobUid);
    case "revoke":
      return revoke(env, match.jobUid);
    case "delete":
      return deleteRun(env, match.jobUid);
    case "run":
      return advertiseStream(await readRun(env, match.jobUid, claims));
    case "results":
      return advertiseStream(await readResults(env, match.jobUid, url, claims));
    case "stream":
      return forwardStream(request, trackerOf(env, match.jobUid), claims);
    case "webhook":
      return webhook(request, env);
    case "health":
      return health(env);
    case "v4-launch":
      return launchV4(request, env, match.action);
    case "v4-callback":
      return receiveV4Callback(request, env);
    default:
      return problem(404, "Not found");
  }
}

async function answer(request, env) {
  const url = new URL(request.url);
  const match = route(request.method, url.pathname);
  if (match.error) return problem(match.error.status, match.error.message);
  const { ok, claims } = await authorize(request, env, match);
  if (!ok) return match.access === "read" ? problem(403, TOKEN_REFUSED) : problem(401, "Not authorized");
  return dispatch(request, env, match, url, claims);
}

/** CORS: only reads, only from configured origins; a preflight is answered here. */
async function withCors(request, env) {
  const policy = cors(request, settings(env).allowedOrigins);
  if (!policy.allowed) return problem(403, "Origin not allowed");
  const response =
    request.method === "OPTIONS" ? new Response(null, { status: 204, headers: preflightHeaders() }) : await answer(request, env);
  for (const [name, value] of Object.entries(policy.headers)) response.headers.set(name, value);
  return response;
}

/**
 * Any answer, with its reason logged (never a secret's value). A configuration fault names the
 * setting to the operator (a caller with the admin token) and in the logs; anyone else gets a
 * generic 500, which tells nothing about the configuration.
 */
async function respond(request, env) {
  try {
    return await withCors(request, env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`worker configuration: ${redacted(env, e.message)}`);
      if (await isAdmin(request, env, false)) return json(500, { message: redacted(env, e.message), setting: e.setting });
      return problem(500, "Internal error");
    }
    console.error(`worker error: ${redacted(env, e?.message ?? e)}`);
    return problem(500, "Internal error");
  }
}

export default {
  async fetch(request, env) {
    const response = await respond(request, env);
    for (const [name, value] of Object.entries(ANSWER_HEADERS)) response.headers.set(name, value);
    // A body the answer did not need (a 401, a 404, …) is read to its end first: closing the
    // connection while the client still sends would reset it before it reads the status.
    await readBody(request, 0).catch(() => {}); // the client went away: nobody reads the answer
    return response;
  },

  /** The cron tick: one call to the registry, which fans the runs out over its alarms. */
  async scheduled(_controller, env) {
    await registryOf(env).tick();
  },
};
