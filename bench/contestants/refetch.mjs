// Contestant 3: a fixed-interval full refetch, as a data-fetching hook's `refetchInterval`
// does (TanStack Query): a status query and a results query (every page, as an infinite
// query refetches them all) on the same interval grid; a refetch is skipped while the
// previous one is in flight; a failed fetch is retried 3 times with exponential backoff
// (TanStack's default, scaled like every other delay) and a query that still fails shows
// its error while the interval goes on; the data is replaced on every refetch; a terminal
// status stops the interval after one last results refetch.
import { FAILED, SUCCEEDED, getJson, resultsUrl, runUrl, sleep } from "./http.mjs";

const RETRIES = 3;

export function createRefetch(options) {
  const { baseUrl, jobUid, intervalMs, retry = {}, onBatch, onStatus } = options;
  const stopper = new AbortController();
  const connection = { ...options, signal: stopper.signal };
  const minDelay = retry.minDelayMs ?? 1000;
  const maxDelay = retry.maxDelayMs ?? 30000;

  /** TanStack's `retryDelay`: min(1000 · 2^n, 30 000), here in the scaled units. */
  async function withRetries(queryFn) {
    for (let attempt = 0; ; attempt++) {
      try {
        return await queryFn();
      } catch (error) {
        if (stopper.signal.aborted || attempt >= RETRIES) throw error;
        await sleep(Math.min(minDelay * 2 ** attempt, maxDelay), stopper.signal);
      }
    }
  }

  async function allPages() {
    const rows = [];
    let url = resultsUrl(baseUrl, jobUid);
    while (url) {
      const body = await getJson(url, connection);
      rows.push(...body.results);
      url = body.paging?.have_next_page ? body.paging.next : null;
    }
    return rows;
  }

  function start() {
    return new Promise((resolve, reject) => {
      let status = null;
      let resultsFlight = null; // the results refetch in flight, if any
      let statusBusy = false;
      let finalRead = false;
      let timer = null;
      const end = (fn, value) => {
        clearInterval(timer);
        stopper.abort(new Error("done"));
        fn(value);
      };
      const fetchResults = async (isFinal) => {
        try {
          const data = await withRetries(allPages);
          await onBatch?.({ results: data, offset: 0, replace: true });
          if (isFinal) end(resolve, { status, totalResults: data.length });
        } catch (error) {
          // The query is in error; the interval refetches anyway. A failed final read is retried.
          if (isFinal && !stopper.signal.aborted) setTimeout(refetchResults, intervalMs);
        } finally {
          resultsFlight = null;
        }
      };
      const refetchResults = () => {
        resultsFlight ??= fetchResults(finalRead);
        return resultsFlight;
      };
      const refetchStatus = async () => {
        if (statusBusy || finalRead) return;
        statusBusy = true;
        try {
          const run = await withRetries(() => getJson(runUrl(baseUrl, jobUid), connection));
          onStatus?.(run);
          status = run.status;
          if (FAILED.has(status)) end(reject, new Error(`run ended with status ${status}`));
          else if (SUCCEEDED.has(status)) {
            // The status invalidates the results query: one last refetch, then no interval.
            finalRead = true;
            clearInterval(timer);
            await resultsFlight;
            refetchResults();
          }
        } catch {
          // In error until the next interval's refetch succeeds.
        } finally {
          statusBusy = false;
        }
      };
      const both = () => {
        refetchStatus();
        refetchResults();
      };
      timer = setInterval(both, intervalMs);
      both();
    });
  }

  return { start, stop: () => stopper.abort(new Error("stopped")) };
}
