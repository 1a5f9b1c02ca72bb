// `POST /__dev/runs` on `npm run worker:dev`'s simulator port: a run for the demo's viewers page
// (www/viewers.html). A page cannot track a run itself: tracking takes the admin token, which no
// page should hold, and the worker's CORS allows reads only. worker:dev holds the local secrets,
// so it creates the run in the simulator, tracks it with the worker and hands the page the
// run's read token, to the demo's origins only (the worker's own ALLOWED_ORIGINS).
import { LOCAL_SECRETS } from "./miniflare-options.mjs";

export const DEV_RUNS_PATH = "/__dev/runs";
const MAX_BODY_BYTES = 4096;
/** What a page may ask for: enough for a demo, not a load test of the machine. */
const LIMITS = { rows: [1, 100_000], durationMs: [0, 3_600_000] };

/** `{ rows, durationMs }` from the body, or a message saying which field is wrong. */
function runSpec(body) {
  const spec = {};
  for (const [name, [min, max]] of Object.entries(LIMITS)) {
    const value = body?.[name];
    if (!Number.isSafeInteger(value) || value < min || value > max) return { error: `\`${name}\` must be a whole number from ${min} to ${max}` };
    spec[name] = value;
  }
  return { spec };
}

async function readJson(req) {
  req.setEncoding("utf8");
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > MAX_BODY_BYTES) return null;
  }
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function send(res, status, body, headers) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

/** Creates the run in the simulator and tracks it with the worker: what the page needs. */
async function newRun({ sim, workerOrigin, simOrigin }, spec) {
  const { jobUid } = sim.createJob(spec);
  const tracked = await fetch(`${workerOrigin}/v3/jobs/${jobUid}/track`, {
    method: "POST",
    headers: { authorization: `Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}` },
  });
  if (!tracked.ok) throw new Error(`the worker did not track ${jobUid}: ${tracked.status} ${await tracked.text()}`);
  const { read_token: readToken } = await tracked.json();
  return { jobUid, readToken, workerUrl: `${workerOrigin}/v3`, simulatorUrl: simOrigin };
}

/**
 * A Node request handler for DEV_RUNS_PATH; returns false for any other path (the simulator's).
 * @param {{ sim: ReturnType<import("../sim/index.js").createSim>, workerOrigin: string,
 *   simOrigin: string, allowedOrigins: string[] }} dev
 */
export function devRuns(dev) {
  return (req, res) => {
    if (new URL(req.url ?? "/", "http://localhost").pathname !== DEV_RUNS_PATH) return false;
    // A request without Origin comes from a local process (curl), not a page.
    const origin = req.headers.origin;
    if (origin !== undefined && !dev.allowedOrigins.includes(origin)) {
      send(res, 403, { message: "Origin not allowed: worker:dev hands read tokens to ALLOWED_ORIGINS only" }, { vary: "origin" });
      return true;
    }
    const cors = origin ? { "access-control-allow-origin": origin, vary: "origin" } : {};
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...cors, "access-control-allow-methods": "POST", "access-control-allow-headers": "content-type", "access-control-max-age": "600" });
      res.end();
    } else if (req.method !== "POST") {
      send(res, 405, { message: "POST a run spec: { rows, durationMs }" }, cors);
    } else {
      answer(dev, req, res, cors).catch((error) => send(res, 502, { message: error.message }, cors));
    }
    return true;
  };
}

async function answer(dev, req, res, cors) {
  const { spec, error } = runSpec(await readJson(req));
  if (error) return send(res, 400, { message: error }, cors);
  send(res, 201, await newRun(dev, spec), cors);
}
