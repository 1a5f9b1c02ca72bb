// The simulator's control routes (/__sim), served on the page's own origin by `npm start`.

/** Credentials the simulator accepts by default (sim/index.js); they unlock nothing real. */
export const SIM_CONNECTION = Object.freeze({ apiKey: "sim-key", projectId: "sim-project" });

async function call(path, init) {
  const res = await fetch(path, init);
  const body = await res.json();
  if (!res.ok) throw new Error(`simulator: ${body.message ?? res.status}`);
  return body;
}

/** Creates a simulated run; resolves with its description (`jobUid`, `rows`, `endsAt`, …). */
export function createSimulatedJob(spec) {
  return call("/__sim/jobs", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(spec) });
}

/** What the simulator saw for one job: `{ requests, bytes, log }` by kind. */
export function simulatorStats(jobUid) {
  return call(`/__sim/stats?job=${encodeURIComponent(jobUid)}`);
}

/** What a naive loop (status + every page, every tick) costs over the same run. */
export function naiveLoopCost(jobUid, intervalMs) {
  return call(`/__sim/jobs/${encodeURIComponent(jobUid)}/naive?intervalMs=${intervalMs}`);
}

/** The simulated job's description, or null when the simulator doesn't know it. */
export async function simulatedJob(jobUid) {
  try {
    return await call(`/__sim/jobs/${encodeURIComponent(jobUid)}`);
  } catch {
    return null;
  }
}
