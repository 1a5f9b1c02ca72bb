// What the seed's naive loop (status + every results page, every tick) would cost. Against the
// simulator the simulator computes it exactly (/__sim/jobs/:uid/naive); against a real API it
// is estimated here from the run's row timeline and the bytes per row seen by this page.

/** Rows received by time `t` (ms), from the arrival timeline. */
function rowsAt(arrivals, t) {
  let total = 0;
  for (const a of arrivals) {
    if (a.t > t) break;
    total = a.total;
  }
  return total;
}

/**
 * A lower bound for a real API: every tick reads the status and at least one page, and
 * downloads every row received so far again.
 * @param {{ arrivals: { t: number, total: number }[], durationMs: number, intervalMs: number,
 *   bytesPerRow: number, statusBytes: number }} run
 */
export function estimateNaiveCost({ arrivals, durationMs, intervalMs, bytesPerRow, statusBytes }) {
  let requests = 0;
  let bytes = 0;
  for (let t = 0; t <= durationMs + intervalMs; t += intervalMs) {
    requests += 2;
    bytes += statusBytes + rowsAt(arrivals, t) * bytesPerRow;
  }
  return { requests, bytes, estimated: true };
}

/**
 * This poller's requests from the simulator's log, split into answered ones and failed attempts
 * (a fault the simulator injected, or a connection that got no answer). The naive loop's cost is
 * computed on the run without faults, so the fair comparison leaves failed attempts out on both
 * sides: it counts the reads each side needed, not the retries one of them happened to make.
 * @param {{ status: number | null, bytes: number, fault?: string, kind: string }[]} log
 */
export function splitAttempts(log) {
  const answered = { requests: 0, bytes: 0 };
  const failed = { requests: 0, bytes: 0 };
  for (const entry of log) {
    if (entry.kind === "preflight" || entry.status === null) continue; // CORS, or still in flight
    const side = entry.fault || entry.status === 0 ? failed : answered;
    side.requests += 1;
    side.bytes += entry.bytes;
  }
  return { answered, failed };
}

/**
 * True when the run is one results page that grows on every tick (or one page this poller did
 * not read less of): the API serves the page whole on every read, so every reader downloads it
 * again each time it grew, and no poller can read much less than the naive loop.
 * @param {{ rows: number | null, pageSize?: number, arrival?: string, oursBytes: number, naiveBytes: number }} run
 */
export function isOneGrowingPage({ rows, pageSize, arrival, oursBytes, naiveBytes }) {
  const onePage = rows !== null && pageSize !== undefined && rows <= pageSize;
  return onePage && (arrival === "linear" || oursBytes >= naiveBytes);
}

/**
 * What the comparison says: the ratio, or on one growing page why there is none to show; and
 * that failed attempts are left out on both sides when there were any.
 * @param {{ ours: { bytes: number }, naive: { bytes: number, ticks: number }, failed: { requests: number },
 *   growingPage: boolean, intervalText: string }} figures
 */
export function comparisonNote({ ours, naive, failed, growingPage, intervalText }) {
  const base = `Naive loop: ${naive.ticks} ticks every ${intervalText} over the same run, computed by the simulator`;
  const faults =
    failed.requests > 0
      ? ` Both sides are counted without failed attempts: the naive loop is computed without faults, so this poller's ${failed.requests} failed ${failed.requests === 1 ? "attempt is" : "attempts are"} left out too.`
      : "";
  if (growingPage) {
    return `${base}. One page that grows on every tick: the API serves the whole page on every read, so every reader — this poller too — downloads it again each time it grows; no poller can read much less here. Several pages, or rows in bursts, show the difference.${faults}`;
  }
  const ratio = ours.bytes > 0 ? ` — ${(naive.bytes / ours.bytes).toFixed(1)}× the bytes of this poller` : "";
  return `${base}${ratio}.${faults}`;
}
