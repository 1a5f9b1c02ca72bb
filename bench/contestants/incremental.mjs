// Contestant 4: a careful hand-written incremental poller, what a good engineer writes
// without the library. Same cadence rules as the library (so the comparison is fair):
// read the page where the last poll stopped, keep the index of the rows seen in it, follow
// `paging.next` at once; read the status after a poll whose growth stopped or slowed down
// (fewer new rows than the poll before), every `statusEvery` polls and at first; after a successful end one final results read (re-read
// a few times while the run reports more rows than delivered); retry 429/5xx/network/bad
// JSON with exponential backoff and full jitter, honouring `Retry-After` within [min, max].
import { FAILED, SUCCEEDED, getJson, resultsUrl, runUrl, sleep } from "./http.mjs";

export function createIncremental(options) {
  const { baseUrl, jobUid, intervalMs, statusEvery = 5, onBatch, onStatus } = options;
  const retry = { retries: 5, minDelayMs: 1000, maxDelayMs: 60000, ...options.retry };
  const timeoutMs = options.timeoutMs ?? 30000;
  const stopper = new AbortController();
  let page = resultsUrl(baseUrl, jobUid); // the page the next poll reads
  let skip = 0; // rows of `page` already delivered
  let offset = 0;
  let polls = 0;
  let prevFresh = 0; // new rows of the previous poll
  let lastRun = null;

  /** One GET with retries; a non-retryable HTTP status rejects at once. */
  async function read(url) {
    for (let attempt = 1; ; attempt++) {
      try {
        const signal = AbortSignal.any([stopper.signal, AbortSignal.timeout(timeoutMs)]);
        return await getJson(url, { ...options, signal });
      } catch (error) {
        if (stopper.signal.aborted || (error.status && !error.retryable) || attempt > retry.retries) throw error;
        await sleep(backoff(attempt, error.retryAfter), stopper.signal);
      }
    }
  }

  function backoff(attempt, retryAfter) {
    const hint = Number(retryAfter) * 1000; // seconds (maybe fractional); dates are not sent here
    if (Number.isFinite(hint) && retryAfter != null) return Math.min(Math.max(hint, retry.minDelayMs), retry.maxDelayMs);
    const high = Math.min(retry.maxDelayMs, retry.minDelayMs * 2 ** (attempt - 1));
    return retry.minDelayMs + Math.random() * (high - retry.minDelayMs);
  }

  /** Reads from the current page to the tail; resolves with the number of new rows. */
  async function readToTail() {
    let fresh = 0;
    for (;;) {
      const body = await read(page);
      const rows = body.results.length > skip ? body.results.slice(skip) : [];
      if (rows.length > 0) {
        await onBatch?.({ results: rows, offset });
        offset += rows.length;
        fresh += rows.length;
      }
      skip = Math.max(skip, body.results.length);
      const next = body.paging?.have_next_page ? body.paging.next : null;
      if (!next || next === page) return fresh;
      page = new URL(next, page).href;
      skip = 0;
    }
  }

  async function readStatus() {
    const run = await read(runUrl(baseUrl, jobUid));
    if (lastRun?.status !== run.status || lastRun?.row_count !== run.row_count) onStatus?.(run);
    lastRun = run;
    if (/all inputs failed/i.test(run.error_message ?? "")) throw new Error("All Inputs Failed");
    if (FAILED.has(run.status)) throw new Error(`run ended with status ${run.status}`);
    return SUCCEEDED.has(run.status);
  }

  /** After a successful end: the last page may lag the run's count, so re-read a little. */
  async function finalRead() {
    await readToTail();
    for (let left = retry.retries; left > 0 && (lastRun.row_count ?? 0) > offset; left--) {
      await sleep(retry.minDelayMs, stopper.signal);
      await readToTail();
    }
    return { status: lastRun.status, totalResults: offset };
  }

  async function start() {
    for (;;) {
      const fresh = await readToTail();
      polls += 1;
      const slowed = fresh === 0 || fresh < prevFresh;
      prevFresh = fresh;
      if (slowed || polls % statusEvery === 0 || lastRun === null) {
        if (await readStatus()) return finalRead();
      }
      await sleep(intervalMs, stopper.signal);
    }
  }

  return { start, stop: () => stopper.abort(new Error("stopped")) };
}
