// A Worker that polls one run on a cron trigger and stores its rows in KV (wrangler.toml beside it).
import { pollStep } from "captaindata-poller";

/**
 * @typedef {{ POLLS: KVNamespace, JOB_UID: string, CAPTAINDATA_API_KEY: string, CAPTAINDATA_PROJECT_ID: string }} Env
 * @type {ExportedHandler<Env>}
 */
export default {
  async scheduled(_controller, env) {
    const jobUid = env.JOB_UID;
    // What the previous tick left: where to go on from, how many rows are stored, whether the run is over.
    const text = await env.POLLS.get(`state:${jobUid}`);
    /** @type {{ cursor?: string, stored: number, done: boolean }} */
    const saved = text ? JSON.parse(text) : { stored: 0, done: false };
    if (saved.done) return; // the run is over for good: no request after its end

    const step = await pollStep({
      jobUid,
      apiKey: env.CAPTAINDATA_API_KEY,
      projectId: env.CAPTAINDATA_PROJECT_ID,
      cursor: saved.cursor,
      maxRequests: 40, // this tick's share of the 50 subrequests a Worker may make (free plan)
      deadlineMs: 20_000,
    });

    // The rows first, at a key named by their offset, then the cursor that points past them: a
    // tick that dies in between reads the same rows again next time and writes the same key.
    if (step.results.length > 0) await env.POLLS.put(`rows:${jobUid}:${saved.stored}`, JSON.stringify(step.results));
    const stored = saved.stored + step.results.length;
    // `done` only when the run is over for good (completed, or a final error): keep the marker.
    await env.POLLS.put(`state:${jobUid}`, JSON.stringify({ cursor: step.cursor, stored, done: step.done }));

    // `requests`: what this step sent, out of the invocation's subrequests (50 free, 1000 paid);
    // a Worker polling several runs in one tick gives the next one what is left.
    console.log(`${jobUid}: ${step.status}, ${stored} rows, ${step.requests} requests this tick`);
    // A retryable failure (RETRIES_EXHAUSTED after 5xx or network errors) is `error` with `done`
    // false: the next tick goes on from the same cursor, as after a tick that spent its deadlineMs
    // or maxRequests (no error). A final one (UNAUTHORIZED, …) ends it.
    if (step.error) console.error(`${jobUid}: ${step.error.code}: ${step.error.message}${step.done ? "" : " (next tick retries)"}`);
  },
};
