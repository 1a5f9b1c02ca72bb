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
