// Shared by the v4 suites: the worker started with its v4 ends (the simulator's /v4 and its own
// origin, known once both are up), the simulated clock moved on with the callbacks it makes due,
// and a JobPoller reading a run back through the worker.
import { JobPoller } from "captaindata-poller";
import { SECRETS, startWorker } from "./worker-fixture.mjs";

export const ADMIN = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}`, "content-type": "application/json" };

/** The worker against the simulator (on `clock`), its v4 settings `settings` on top of the ends. */
export async function startV4Worker({ clock, sim = {}, settings = {} }) {
  const w = await startWorker({ sim: { clock, ...sim } });
  await w.restart({ CAPTAINDATA_V4_BASE_URL: `${w.server.origin}/v4`, PUBLIC_URL: w.origin, ...settings });
  return w;
}

/** Moves the simulated time on (in steps), sending the callbacks due, each answered by the worker. */
export async function advance(w, clock, ms, step = 1000) {
  for (let t = 0; t < ms; t += step) {
    clock.advance(Math.min(step, ms - t));
    w.sim.tick();
    await w.sim.v4.settled();
  }
}

/** A v4 launch through the worker (admin). */
export function launchV4(w, body, headers = ADMIN, action = "linkedin-extract-people") {
  return w.call(`/v4/actions/${action}/async`, { method: "POST", headers, body: JSON.stringify(body) });
}

/** What a JobPoller reading the run through the worker gets: its rows and summary; rejects with its error. */
export async function readThroughWorker(w, runUid, token, { intervalMs, maxDurationMs, rows = [] }) {
  const summary = await new JobPoller({
    jobUid: runUid,
    baseUrl: `${w.origin}/v3`,
    headers: { "x-read-token": token },
    intervalMs,
    maxDurationMs,
    retry: { retries: 5, minDelayMs: 5, maxDelayMs: 50 },
    onBatch: (batch) => void rows.push(...batch.results),
  }).start();
  return { rows, summary };
}

/**
 * A v4 launch through the worker that also resolves with what the worker sent Captain Data: its
 * launch body (`sent`, with the callback and its secret header), read on the way to the simulator.
 * @returns {Promise<{ res: object, sent: object, runUid: string, token: string, secret: string }>}
 */
export async function launchV4Seen(w, body, action = "linkedin-extract-people") {
  let sent = null;
  const previous = w.hooks.intercept;
  w.hooks.intercept = async (request) => {
    if (!request.url.endsWith(`/v4/actions/${action}/async`)) return previous?.(request);
    const bytes = await request.arrayBuffer();
    sent = JSON.parse(new TextDecoder().decode(bytes));
    return w.sim.handle(new Request(request.url, { method: "POST", headers: request.headers, body: bytes }));
  };
  try {
    const res = await launchV4(w, body, ADMIN, action);
    return { res, sent, runUid: res.body?.run_uid, token: res.body?.read_token, secret: sent?.callback?.headers?.["x-callback-secret"] };
  } finally {
    w.hooks.intercept = previous;
  }
}

/** Posts one callback to the worker with the given headers. */
export function postCallback(w, body, headers) {
  return w.call("/v4/callbacks", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}
