import { JobPoller } from "captaindata-poller";

/**
 * Shows a run the worker tracks, reading its rows from the worker (no API key in the page).
 * @param {string} jobUid
 * @param {string} readToken issued by the worker when it started tracking the run
 * @param {(rows: readonly Record<string, unknown>[]) => void} render
 */
export function showRun(jobUid, readToken, render) {
  const poller = new JobPoller({
    jobUid,
    baseUrl: "https://captaindata-poller.your-subdomain.workers.dev/v3", // the worker
    headers: { "x-read-token": readToken },
    onBatch: ({ results }) => render(results),
  });
  return poller.start();
}
