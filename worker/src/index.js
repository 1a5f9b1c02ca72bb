// The Cloudflare Worker: routes (schedule, track, v3 reads, webhook) and the cron tick.
import { scheduleWorkflow } from "../../js/workerd.js";
import { bearer, checkReadToken, cors, preflightHeaders, READ_TOKEN_HEADER, readToken, sameSecret } from "./access.js";
import { readBody } from "./body.js";
import { ConfigError, connection, secret, settings } from "./config.js";
import { registryOf, trackerOf } from "./registry.js";
import { isRunId, route } from "./routes.js";
import { advertiseStream, forwardStream, streamToken } from "./stream.js";
import { webhookEvent } from "./webhook-events.js";

export { Registry } from "./registry.js";
export { RunTracker } from "./run-tracker.js";

const WEBHOOK_HEADER = "x-webhook-secret";
const MAX_BODY_BYTES = 1 << 20;
const decoder = new TextDecoder();

function json(status, body, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

const problem = (status, message) => json(status, { message });

/** The request's JSON body, at most MAX_BODY_BYTES bytes (UTF-8 bytes, not UTF-16 units). */
async function readJson(request) {
  const { bytes, tooLarge } = await readBody(request, MAX_BODY_BYTES);
  if (tooLarge) return { error: problem(413, `Body too large: at most ${MAX_BODY_BYTES} bytes`) };
  try {
    return { body: JSON.parse(decoder.decode(bytes)) };
  } catch {
    return { error: problem(400, "Body must be JSON") };
  }
}

/** Starts tracking a run: registry first, so a run that is stepping is always swept too. */
async function track(env, jobUid, info) {
  await registryOf(env).add(jobUid);
  const { created, resumed } = await trackerOf(env, jobUid).track(jobUid, info);
  return { job_uid: jobUid, read_token: await readToken(secret(env, "READ_TOKEN_SECRET"), jobUid), created, resumed };
}

async function schedule(request, env, workflowUid) {
  const { body, error } = await readJson(request);
  if (error) return error;
  if (body === null || typeof body !== "object" || Array.isArray(body)) return problem(400, "Body must be a JSON object");
  let launched;
  try {
    launched = await scheduleWorkflow(connection(env), workflowUid, body);
  } catch (e) {
    // Captain Data's own 4xx message is passed on (it never holds the key); the rest is a 502.
    const status = e?.status >= 400 && e?.status < 500 && e.code !== "UNAUTHORIZED" ? e.status : 502;
    return json(status, { message: String(e?.message ?? "schedule failed"), code: e?.code ?? "BAD_RESPONSE" });
  }
  // The uid names a Durable Object and goes into upstream URLs: only a well-formed one is tracked.
  if (!isRunId(launched.jobUid)) {
    console.error("schedule: Captain Data answered without a valid job_uid; nothing tracked");
    return json(502, { message: "Captain Data answered without a valid job_uid", code: "BAD_RESPONSE" });
  }
  const name = typeof body.job_name === "string" ? body.job_name : null;
  const tracked = await track(env, launched.jobUid, { name, workflowUid });
  return json(201, { message: launched.message, workflow: launched.workflow, ...tracked });
}

/** Tracks a run, or resumes one that ended in an error (e.g. given up after failed steps). */
async function trackExisting(env, jobUid) {
  const tracked = await track(env, jobUid, {});
  return json(tracked.created ? 201 : 200, tracked);
}

async function readRun(env, jobUid) {
  const view = await trackerOf(env, jobUid).runView();
  if (!view || view.missing) return problem(404, "Job not found");
  return json(200, view.run);
}

async function readResults(env, jobUid, url) {
  const raw = url.searchParams.get("page");
  const page = raw === null ? 1 : Number(raw);
  if (!Number.isSafeInteger(page) || page < 1) return problem(400, "`page` must be an integer ≥ 1");
  const resultsUrl = `${url.origin}/v3/jobs/${jobUid}/results`;
  const body = await trackerOf(env, jobUid).resultsPage(page, settings(env).pageSize, resultsUrl);
  if (body === null) return problem(404, "Job not found");
  return new Response(body, { headers: { "content-type": "application/json" } });
}

async function webhook(request, env) {
  if (!(await sameSecret(request.headers.get(WEBHOOK_HEADER), secret(env, "WEBHOOK_SECRET")))) return problem(401, "Bad webhook secret");
  const { body, error } = await readJson(request);
  if (error) return error;
  const jobUid = body?.job_uid;
  if (!isRunId(jobUid)) return problem(400, "`job_uid` is missing or invalid");
  // Created and unknown events are acknowledged (so Captain Data does not retry) and change nothing.
  const event = webhookEvent(body);
  if (event === null) return json(200, { job_uid: jobUid, state: "ignored" });
  // An end event is a hint to step now; the run ends when the API's own status says so. The
  // body goes to pollStep as received: the package classifies it again, the same way.
  const state = await trackerOf(env, jobUid).webhook(body);
  // An untracked or finished run is acknowledged too, so Captain Data does not retry it.
  return json(state === "accepted" ? 202 : 200, { job_uid: jobUid, state });
}

/** Configuration problems for operators: 200 when there are none, 503 with the list otherwise. */
function health(env) {
  const problems = settings(env).problems.map(({ setting, message, polling }) => ({ setting, message, stops_polling: polling }));
  return json(problems.length === 0 ? 200 : 503, { ok: problems.length === 0, problems });
}

async function authorized(request, env, match) {
  if (match.access === "admin") return sameSecret(bearer(request), secret(env, "ADMIN_TOKEN"));
  // A browser cannot set headers on a WebSocket: the stream's token comes as a subprotocol.
  const token = match.name === "stream" ? streamToken(request) : request.headers.get(READ_TOKEN_HEADER);
  if (match.access === "read") return checkReadToken(secret(env, "READ_TOKEN_SECRET"), match.jobUid, token);
  return true;
}

async function dispatch(request, env, match, url) {
  switch (match.name) {
    case "schedule":
      return schedule(request, env, match.workflowUid);
    case "track":
      return trackExisting(env, match.jobUid);
    case "run":
      return advertiseStream(await readRun(env, match.jobUid));
    case "results":
      return advertiseStream(await readResults(env, match.jobUid, url));
    case "stream":
      return forwardStream(request, trackerOf(env, match.jobUid));
    case "webhook":
      return webhook(request, env);
    case "health":
      return health(env);
    default:
      return problem(404, "Not found");
  }
}

async function answer(request, env) {
  const url = new URL(request.url);
  const match = route(request.method, url.pathname);
  if (match.error) return problem(match.error.status, match.error.message);
  if (!(await authorized(request, env, match))) return problem(match.access === "read" ? 403 : 401, "Not authorized");
  return dispatch(request, env, match, url);
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

/** Any answer, with its reason logged: a configuration fault names the setting. */
async function respond(request, env) {
  try {
    return await withCors(request, env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`worker configuration: ${e.message}`);
      return json(500, { message: e.message, setting: e.setting });
    }
    console.error(`worker error: ${e?.message ?? e}`);
    return problem(500, "Internal error");
  }
}

export default {
  async fetch(request, env) {
    const response = await respond(request, env);
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
