// The worker's Captain Data v4 routes: `POST /v4/actions/{action}/async` (admin) launches a run
// with the worker as its callback receiver; `POST /v4/callbacks` receives the callbacks.
import { classifyV4Status } from "captaindata-poller";
import { newCallbackSecret, readToken, secretDigest } from "./access.js";
import { readBody } from "./body.js";
import { redacted, secret, settings } from "./config.js";
import { trackedRunsCapBody } from "./limits.js";
import { registryOf, trackerOf } from "./registry.js";
import { isRunId } from "./routes.js";
import { launch, launchedUid } from "./v4-api.js";
import { CALLBACK_HEADER, v4Callback, v4Settings } from "./v4-settings.js";

// A launch carries up to 100,000 inputs; a callback one page of results.
const MAX_LAUNCH_BYTES = 32 << 20;
const MAX_CALLBACK_BYTES = 32 << 20;
const MAX_BATCH_UID = 128;
// A per-launch callback secret: 32 bytes, base64url (access.js newCallbackSecret).
const CALLBACK_SECRET = /^[A-Za-z0-9_-]{43}$/;
/** A callback that claims a stored batch_uid with other rows (a forgery, or a broken sender). */
export const BATCH_CONFLICT = "BATCH_CONFLICT";
const decoder = new TextDecoder();

// Captain Data's limit on a launch's inputs (DESIGN.md, v4).
const MAX_INPUTS = 100_000;
/** The code of a launch refused for its request (its body, its action): the caller's to fix. */
export const BAD_REQUEST = "BAD_REQUEST";

const json = (status, body) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const problem = (status, message, extra = {}) => json(status, { message, ...extra });
const badRequest = (message) => problem(400, message, { code: BAD_REQUEST });

async function readJson(request, limit) {
  const { bytes, tooLarge } = await readBody(request, limit);
  if (tooLarge) return { error: problem(413, `Body too large: at most ${limit} bytes`, { code: BAD_REQUEST }) };
  try {
    return { body: JSON.parse(decoder.decode(bytes)) };
  } catch {
    return { error: badRequest("Body must be JSON") };
  }
}

/** Why a launch body is refused before anything is sent to Captain Data, or null. */
function launchBodyProblem(body) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "Body must be a JSON object, e.g. {\"inputs\": [{…}]}";
  if ("callback" in body) return "`callback` is set by the worker (its own URL and secret): leave it out";
  if (!("inputs" in body)) return "`inputs` is missing: the body needs `inputs`, a non-empty array of the action's inputs";
  if (!Array.isArray(body.inputs) || body.inputs.length === 0) return "`inputs` must be a non-empty array of the action's inputs";
  if (body.inputs.length > MAX_INPUTS) return `\`inputs\` holds ${body.inputs.length} inputs: at most ${MAX_INPUTS} per launch`;
  return null;
}

/** The code of Captain Data's refusal of a launch, passed on with its status. */
function refusalCode(status) {
  if (status === 401 || status === 403) return "UNAUTHORIZED";
  if (status === 404) return "NOT_FOUND"; // no such action
  if (status === 429) return "RATE_LIMITED";
  return status >= 400 && status < 500 ? BAD_REQUEST : "BAD_RESPONSE";
}

/**
 * Launches `action` in async mode with the body as given, plus the worker's callback (its URL on
 * PUBLIC_URL and a secret header of the run's own, made here), tracks the run (with the
 * secret's digest) and answers `201 {run_uid, read_token,
 * read_token_expires_at}`. Refused (409) when MAX_TRACKED_RUNS runs are stored: checked before
 * the launch, so a run launched is always tracked. A body without `inputs` (or one that sets
 * `callback`) is refused here, `400 {code: "BAD_REQUEST"}` naming what is wrong; so is one
 * Captain Data refuses (its status and message, and a code for it).
 */
export async function launchV4(request, env, action) {
  const { body, error } = await readJson(request, MAX_LAUNCH_BYTES);
  if (error) return error;
  const bodyProblem = launchBodyProblem(body);
  if (bodyProblem) return badRequest(bodyProblem);
  const v4 = v4Settings(env);
  const callbackSecret = newCallbackSecret();
  const callback = v4Callback(env, callbackSecret);
  const { maxTrackedRuns, readTokenTtlSeconds } = settings(env);
  if (!(await registryOf(env).hasRoom(maxTrackedRuns))) return json(409, trackedRunsCapBody(maxTrackedRuns));
  const answer = await launch(v4, action, { ...body, callback });
  if (answer.status < 200 || answer.status >= 300) {
    // Captain Data's own 4xx message is passed on (it never holds the key); the rest is a 502.
    const refused = answer.status >= 400 && answer.status < 500 && ![401, 403].includes(answer.status);
    // Its message could quote the body sent, the callback secret included: never passed on.
    const quoted = typeof answer.body?.message === "string" ? answer.body.message : null;
    const upstream = quoted === null ? null : redacted(env, quoted).split(callbackSecret).join("[callback secret]");
    const message = upstream ?? `Captain Data answered ${answer.status || "nothing"}`;
    return problem(refused ? answer.status : 502, message, { code: refusalCode(answer.status) });
  }
  const runUid = launchedUid(answer.body);
  // The uid names a Durable Object and goes into upstream URLs: only a well-formed one is tracked.
  if (!isRunId(runUid)) {
    console.error("v4 launch: Captain Data answered without a valid run uid; nothing tracked");
    return problem(502, "Captain Data answered without a valid run uid", { code: "BAD_RESPONSE" });
  }
  await registryOf(env).add(runUid, maxTrackedRuns, true);
  const { epoch } = await trackerOf(env, runUid).trackV4(runUid, { action, secretDigest: await secretDigest(callbackSecret), inputs: body.inputs.length });
  const expiresAt = Math.floor(Date.now() / 1000 + readTokenTtlSeconds) * 1000;
  const token = await readToken(secret(env, "READ_TOKEN_SECRET"), runUid, { epoch, expiresAt });
  return json(201, { run_uid: runUid, read_token: token, read_token_expires_at: new Date(expiresAt).toISOString() });
}

/** The callback's run and batch, or the reason it is refused. */
function callbackProblem(body) {
  const run = body?.run;
  if (!run || typeof run !== "object") return "`run` is missing";
  if (!isRunId(run.run_uid)) return "`run.run_uid` is missing or invalid";
  if (typeof run.batch_uid !== "string" || run.batch_uid === "" || run.batch_uid.length > MAX_BATCH_UID) return "`run.batch_uid` is missing or invalid";
  if (typeof run.status !== "string") return "`run.status` is missing";
  if (body.results !== null && body.results !== undefined && !Array.isArray(body.results)) return "`results` must be an array";
  return null;
}

/**
 * One v4 callback, proved by its run's own secret (the `x-callback-secret` header its launch
 * gave Captain Data; checked by the run's tracker against the digest stored with the run, in
 * constant time), then its batch stored once in that tracker. Every valid callback of a tracked
 * run is acknowledged (200), an identical duplicate too, so Captain Data marks its delivery
 * SUCCESS and does not need to replay it. WEBHOOK_SECRET opens nothing here.
 */
export async function receiveV4Callback(request, env) {
  const presented = request.headers.get(CALLBACK_HEADER);
  // Shaped like a secret the worker makes, or refused before the body is read.
  if (typeof presented !== "string" || !CALLBACK_SECRET.test(presented)) {
    return problem(401, "Missing or malformed callback secret (x-callback-secret)");
  }
  const { body, error } = await readJson(request, MAX_CALLBACK_BYTES);
  if (error) return error;
  const refused = callbackProblem(body);
  if (refused) return problem(400, refused);
  const seen = await classifyV4Status(body.run.status);
  const runUid = body.run.run_uid;
  const state = await trackerOf(env, runUid).v4Callback(body, { class: seen.class, v3Status: seen.v3Status }, presented);
  // Not stored here (deleted, or the launch's answer not in yet): the delivery fails, and is
  // replayed by the safety net if the run is tracked.
  if (state === "unknown") return problem(404, "This worker does not track the run");
  if (state === "forbidden") return problem(403, "Bad callback secret for this run");
  if (state === "conflict") {
    return problem(409, "This batch_uid is stored already with other rows: refused", { code: BATCH_CONFLICT });
  }
  return json(200, { run_uid: runUid, batch_uid: body.run.batch_uid, state });
}
