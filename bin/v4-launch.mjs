// `run <action> --v4`: a Captain Data v4 run launched through the project's worker, which
// receives its callbacks (`POST <origin>/v4/actions/<action>/async`, the admin token in the
// Authorization header), then read back like a v3 run through `<origin>/v3` with the read token
// the launch answered. The admin token comes from CAPTAINDATA_ADMIN_TOKEN only: a flag would
// put it in the process list. Neither token is ever printed.
import { checkCleartext, READ_TOKEN_HEADER } from "./connection.mjs";
import { EXIT } from "./exit-codes.mjs";
import { printable } from "./progress.mjs";
import { noAnswerReason } from "./requests.mjs";
import { UsageError } from "./usage-error.mjs";

export const ADMIN_TOKEN_VARIABLE = "CAPTAINDATA_ADMIN_TOKEN";
/** Where the read token of a v4 run came from (`access.tokenFrom`): named in messages, never printed. */
export const LAUNCH_TOKEN = "the read token of the v4 launch";

// The worker's action names (worker/src/routes.js isRunId): anything else is refused as a path.
const ACTION = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
// Flags that make no sense here: the worker holds the key, the launch gives the read token.
const NOT_WITH_V4 = {
  "api-key-file": "the worker holds the API key",
  "project-id": "the worker holds the API key and its project",
  "read-token": "the launch answers the run's read token",
  header: "the worker takes the admin token, then the launch's read token",
  "header-env": "the worker takes the admin token, then the launch's read token",
  steps: "a v4 action takes --inputs only",
  "job-name": "a v4 run has no name; the worker names it after the action",
};

/** Refuses what --v4 cannot use, naming the flag: before any request. */
export function checkV4Flags(values, action) {
  if (values["base-url"] === undefined) {
    throw new UsageError("run --v4: --base-url is required: the origin of the project's worker, which launches v4 runs and receives their callbacks (e.g. https://captaindata-poller.<you>.workers.dev, or http://127.0.0.1:8787 for npm run worker:dev)");
  }
  for (const [flag, why] of Object.entries(NOT_WITH_V4)) {
    if (values[flag] !== undefined) throw new UsageError(`run --v4: --${flag} is not used with --v4 (${why})`);
  }
  if (!ACTION.test(action)) {
    throw new UsageError(`run --v4: ${JSON.stringify(action)} is not an action name (letters, digits, - and _, e.g. linkedin-extract-people)`);
  }
}

/** The worker's origin from `--base-url` (its origin, or with /v3 or /v4 after it). */
export function workerOrigin(baseUrl) {
  if (!URL.canParse(baseUrl)) throw new UsageError(`--base-url: not a URL (got ${JSON.stringify(baseUrl)}); with --v4, the worker's origin, e.g. https://captaindata-poller.<you>.workers.dev`);
  const url = new URL(baseUrl);
  const shown = `${url.origin}${url.pathname}`;
  if (!["http:", "https:"].includes(url.protocol)) throw new UsageError(`--base-url ${shown}: with --v4, an http(s) URL of the worker`);
  if (/(^|\.)captaindata\.com?$/i.test(url.hostname)) {
    throw new UsageError(`--base-url ${url.origin}: --v4 launches through the project's worker, which receives the run's callbacks; give the worker's origin, not the API's`);
  }
  if (!/^\/((v3|v4)\/?)?$/i.test(url.pathname)) {
    throw new UsageError(`--base-url ${shown}: with --v4, the worker's origin without a path (got the path ${url.pathname}), e.g. ${url.origin}`);
  }
  checkCleartext(url.origin);
  return url.origin;
}

/** The admin token from the environment, or a usage error saying where to put it. */
export function adminToken(env) {
  const token = env[ADMIN_TOKEN_VARIABLE];
  if (token === undefined || token === "") {
    throw new UsageError(`run --v4: ${ADMIN_TOKEN_VARIABLE} is not set: the worker's admin token (its ADMIN_TOKEN secret) launches v4 runs; it is read from the environment only, never from a flag`);
  }
  if (/[\0\r\n]/.test(token)) throw new UsageError(`run --v4: ${ADMIN_TOKEN_VARIABLE} holds a line break or NUL`);
  return token;
}

/**
 * The connection and access for `run --v4` before the launch: the worker's /v3 for the reads
 * (the read token is added once the launch answers), the admin token among the secrets that
 * every printed text is cleaned of.
 */
export function v4ConnectionFrom(values, env, action) {
  checkV4Flags(values, action);
  const origin = workerOrigin(values["base-url"]);
  const admin = adminToken(env);
  const access = { keyFrom: null, projectFrom: null, tokenFrom: LAUNCH_TOKEN, headerNames: [], proxy: true, secrets: [[admin, "[admin token]"]] };
  return { connection: { baseUrl: `${origin}/v3` }, access, v4: { origin, admin } };
}

/** A worker's JSON answer's `message` and `code`, cleaned for a terminal. */
async function answerOf(response) {
  const text = await response.text().catch(() => "");
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: said by the status alone
  }
  const message = typeof body?.message === "string" ? printable(body.message).slice(0, 500) : null;
  const code = typeof body?.code === "string" && /^[A-Z_]{1,40}$/.test(body.code) ? body.code : null;
  return { body, message, code, setting: typeof body?.setting === "string" ? body.setting : null };
}

/** What the person should fix after a refused launch, and the exit code. */
function refusal(status, { message, code, setting }, { action, inputsFile }) {
  const said = `${code ? `${code}: ` : ""}${message ?? "no message"} (HTTP ${status})`;
  if (status === 401) return { code: EXIT.ACCESS, text: `${said}: the worker refused the admin token: check ${ADMIN_TOKEN_VARIABLE}` };
  if (status === 404 && code === "NOT_FOUND") return { code: EXIT.ACCESS, text: `${said}: Captain Data has no action ${JSON.stringify(action)}: check <action>` };
  if (status === 404) return { code: EXIT.ACCESS, text: `${said}: the worker at --base-url has no v4 launch route: check --base-url (the worker's origin)` };
  if (status === 409) return { code: EXIT.RUN_FAILED, text: `${said}: nothing was launched` };
  if (status >= 400 && status < 500) return { code: EXIT.USAGE, text: `${said}: check --inputs ${inputsFile} and <action> ${JSON.stringify(action)}; nothing was launched` };
  if (setting) return { code: EXIT.RUN_FAILED, text: `${said}: the worker's setting ${setting} needs fixing (its GET /health lists the problems)` };
  return { code: EXIT.GAVE_UP, text: `${said}: not retried, as a retry could launch the run twice` };
}

/**
 * `POST <origin>/v4/actions/<action>/async` with `{ inputs }`. Resolves with
 * `{ runUid, readToken }` or `{ failed: { code, text } }` (the exit code, the error line).
 */
export async function launchV4Run({ origin, admin, action, inputs, inputsFile, fetch = globalThis.fetch }) {
  const url = `${origin}/v4/actions/${encodeURIComponent(action)}/async`;
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ inputs }),
    });
  } catch (error) {
    const reason = noAnswerReason(error, url);
    const question = reason.code === "BAD_PORT" ? "." : ": is the worker running there?";
    return { failed: { code: EXIT.GAVE_UP, text: `${reason.text} (--base-url ${origin})${question} Not retried, as a retry could launch the run twice` } };
  }
  const answer = await answerOf(response);
  if (response.status !== 201) return { failed: refusal(response.status, answer, { action, inputsFile }) };
  const runUid = answer.body?.run_uid;
  const readToken = answer.body?.read_token;
  if (typeof runUid !== "string" || !ACTION.test(runUid) || typeof readToken !== "string" || readToken === "") {
    return { failed: { code: EXIT.RUN_FAILED, text: "the worker answered 201 without a run uid and read token: is --base-url the project's worker?" } };
  }
  return { runUid, readToken };
}

/**
 * A read token for a run the worker tracks already (`POST <origin>/v3/jobs/<uid>/track`, admin):
 * how a v4 run followed in a --state file is continued, its first token never having been kept.
 */
export async function trackedReadToken({ origin, admin, runUid, fetch = globalThis.fetch }) {
  const url = `${origin}/v3/jobs/${encodeURIComponent(runUid)}/track`;
  let response;
  try {
    response = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" }, body: "{}" });
  } catch (error) {
    return { failed: { code: EXIT.GAVE_UP, text: `${noAnswerReason(error, url).text} (--base-url ${origin}): is the worker running there?` } };
  }
  const answer = await answerOf(response);
  if (response.status === 401) return { failed: { code: EXIT.ACCESS, text: `the worker refused the admin token: check ${ADMIN_TOKEN_VARIABLE}` } };
  if (response.status !== 200 && response.status !== 201) {
    return { failed: { code: EXIT.RUN_FAILED, text: `the worker gave no read token for run ${runUid}: ${answer.message ?? "no message"} (HTTP ${response.status})` } };
  }
  const readToken = answer.body?.read_token;
  if (typeof readToken !== "string" || readToken === "") return { failed: { code: EXIT.RUN_FAILED, text: "the worker's /track answered without a read token" } };
  return { readToken };
}

/** The connection and access with the run's read token: what `watch` reads the run with. */
export function withReadToken({ connection, access }, readToken) {
  access.secrets.push([readToken, "[read token]"]);
  return { connection: { ...connection, headers: { [READ_TOKEN_HEADER]: readToken } }, access };
}
