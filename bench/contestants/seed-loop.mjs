// Contestant 2: the seed's loop, ported to JS. Every tick it reads the run status, then the
// results, and slices off the rows already seen by index (`results[index:]`). The port reads
// every page each tick (following `paging.next`); `firstPageOnly` is the loop as written,
// which never sees a row past the first page.
import { FAILED, SUCCEEDED, getJson, resultsUrl, runUrl, sleep } from "./http.mjs";

export function createSeedLoop(options) {
  const { baseUrl, jobUid, intervalMs, firstPageOnly = false, onBatch, onStatus } = options;
  const stopper = new AbortController();
  const connection = { ...options, signal: stopper.signal };
  let index = 0;

  async function readResults() {
    const rows = [];
    let url = resultsUrl(baseUrl, jobUid);
    while (url) {
      const body = await getJson(url, connection);
      rows.push(...body.results);
      url = !firstPageOnly && body.paging?.have_next_page ? body.paging.next : null;
    }
    return rows;
  }

  async function tick() {
    const run = await getJson(runUrl(baseUrl, jobUid), connection);
    onStatus?.(run);
    const results = await readResults();
    const fresh = results.slice(index);
    if (fresh.length > 0) await onBatch?.({ results: fresh, offset: index });
    index = results.length;
    return run.status;
  }

  async function start() {
    for (;;) {
      let status = null;
      try {
        status = await tick();
      } catch (error) {
        // The seed logs a failed tick and tries again at the next one; only a 4xx is fatal.
        if (stopper.signal.aborted || (error.status && !error.retryable)) throw error;
      }
      if (SUCCEEDED.has(status)) return { status, totalResults: index };
      if (FAILED.has(status)) throw new Error(`run ended with status ${status}`);
      await sleep(intervalMs, stopper.signal);
    }
  }

  return { start, stop: () => stopper.abort(new Error("stopped")) };
}
