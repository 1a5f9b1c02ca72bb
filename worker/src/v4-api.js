// The few Captain Data v4 calls the worker makes: launch, a run's status, its deliveries, a
// replay. The key travels only in the X-API-Key header. Each answer is `{ status, body }`
// (status 0: no answer); nothing here retries: the safety net's next round does. `headers`:
// extra headers of the caller's (the round's x-poller-step, which tells the rounds apart in logs).

const TIMEOUT_MS = 20000;
const PAGE = 100; // the deliveries list's largest page
export const MAX_PAGES = 20; // 2,000 deliveries of one run per round, at most

async function call(v4, path, { method = "GET", body, headers: extra = {} } = {}) {
  const headers = { ...extra, "x-api-key": v4.apiKey, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  try {
    const response = await fetch(`${v4.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await response.text();
    let parsed = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: `body` stays null
    }
    return { status: response.status, body: parsed };
  } catch {
    return { status: 0, body: null };
  }
}

const ok = (answer) => answer.status >= 200 && answer.status < 300;

/** `POST /actions/{action}/async` with the body as given (the callback added by the caller). */
export const launch = (v4, action, body) => call(v4, `/actions/${encodeURIComponent(action)}/async`, { method: "POST", body });

/** `GET /runs/{uid}`. */
export const readRun = (v4, runUid, headers) => call(v4, `/runs/${encodeURIComponent(runUid)}`, { headers });

/** `POST /runs/callbacks/{uid}/replay`. */
export const replay = (v4, deliveryUid, headers) =>
  call(v4, `/runs/callbacks/${encodeURIComponent(deliveryUid)}/replay`, { method: "POST", body: {}, headers });

/** Where a launch answer holds the run uid: `run_uid`, `uid`, `run.run_uid` or `run.uid` (the docs do not say). */
export function launchedUid(body) {
  for (const value of [body?.run_uid, body?.uid, body?.run?.run_uid, body?.run?.uid]) {
    if (typeof value === "string" && value !== "") return value;
  }
  return null;
}

/** A list answer's deliveries: a JSON array, or the array under `data`, `results`, `items` or `callbacks`. */
function itemsOf(body) {
  if (Array.isArray(body)) return body;
  for (const key of ["data", "results", "items", "callbacks"]) if (Array.isArray(body?.[key])) return body[key];
  return null;
}

/**
 * The deliveries of a run, page after page (`limit=100`, oldest first), at most `maxPages`
 * pages (the round's subrequest budget). Resolves with `{ deliveries, requests, complete }`
 * (`complete`: the last page was not full, so nothing is left unread), or `{ error, requests }`
 * when a page could not be read.
 */
export async function listDeliveries(v4, runUid, { maxPages = MAX_PAGES, headers } = {}) {
  const deliveries = [];
  const pages = Math.max(1, Math.min(MAX_PAGES, maxPages));
  for (let page = 0; page < pages; page++) {
    const answer = await call(v4, `/runs/callbacks?run_uid=${encodeURIComponent(runUid)}&limit=${PAGE}&offset=${page * PAGE}&sort=created_at`, { headers });
    const items = ok(answer) ? itemsOf(answer.body) : null;
    if (!items) return { error: answer, requests: page + 1 };
    deliveries.push(...items.filter((d) => d && typeof d === "object" && typeof d.uid === "string"));
    if (items.length < PAGE) return { deliveries, requests: page + 1, complete: true };
  }
  return { deliveries, requests: pages, complete: false };
}
