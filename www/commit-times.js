// The delay from the worker's commit of a row to a viewer's onBatch, measured one way for the
// push bench (bench/push.mjs) and the demo's viewers page (www/viewers.js). The worker stores a
// step's rows and publishes them right after the step's last answer from Captain Data, so a
// row's commit is the end of the last API answer before the row first reached a viewer (or
// that arrival itself when no answer is recorded before it). Plain functions: Node and pages.

/** The index of the last of `sorted` at or before `at`, or -1. */
function lastAtOrBefore(sorted, at) {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid] <= at) low = mid + 1;
    else high = mid;
  }
  return low - 1;
}

/**
 * When the worker committed each row.
 * @param {Map<number, number>} seen row offset → when it first reached a viewer (ms)
 * @param {number[]} answers when the worker's API answers for the run ended (ms, any order)
 * @returns {Map<number, number>} row offset → commit time (ms)
 */
export function commitTimes(seen, answers) {
  const ends = [...answers].sort((a, b) => a - b);
  const commits = new Map();
  for (const [offset, at] of seen) {
    const i = lastAtOrBefore(ends, at);
    commits.set(offset, i >= 0 ? ends[i] : at);
  }
  return commits;
}

/**
 * A viewer's delays, one per row it received live: rows committed before it joined are its
 * backlog, not a delay of the transport.
 * @param {{ joined: number, arrivals: { at: number, offset: number, n: number }[] }} viewer
 *   `arrivals`: each onBatch (when, the batch's offset, its row count)
 * @param {Map<number, number>} commits from commitTimes
 * @returns {number[]} ms, in arrival order
 */
export function rowDelays({ joined, arrivals }, commits) {
  const delays = [];
  for (const { at, offset, n } of arrivals) {
    for (let i = 0; i < n; i++) {
      const commit = commits.get(offset + i);
      if (commit !== undefined && commit >= joined) delays.push(at - commit);
    }
  }
  return delays;
}
