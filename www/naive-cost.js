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
