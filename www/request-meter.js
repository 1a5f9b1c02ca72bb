// Wraps the fetch the poller uses (its `fetch` option) to see every request it makes:
// kind, outcome, bytes and time. Works the same against the simulator or a real API.

/** @typedef {{ t: number, kind: "results" | "run" | "other", status: number, bytes: number, failed: boolean }} RequestEvent */

const kindOf = (url) => (/\/results(\?|$)/.test(url) ? "results" : /\/jobs\/[^/]+$/.test(url.split("?")[0]) ? "run" : "other");

async function bytesOf(response) {
  const length = Number(response.headers.get("content-length"));
  if (Number.isFinite(length) && length > 0) return length;
  // No length header (chunked or compressed): measure a copy, the poller reads the original.
  try {
    return (await response.clone().arrayBuffer()).byteLength;
  } catch {
    return 0;
  }
}

/**
 * @param {number} t0 time origin of the events (ms, Date.now())
 * @param {() => void} onEvent called after each recorded request
 */
export function createRequestMeter(t0, onEvent) {
  /** @type {RequestEvent[]} */
  const events = [];
  const record = (event) => {
    events.push(event);
    onEvent();
  };
  async function meteredFetch(input, init) {
    const url = String(input);
    const kind = kindOf(url);
    try {
      const response = await fetch(input, init);
      const failed = response.status === 429 || response.status >= 500;
      record({ t: Date.now() - t0, kind, status: response.status, bytes: await bytesOf(response), failed });
      return response;
    } catch (error) {
      // Dropped connection, timeout or stop(): the poller decides; we only note the failure.
      if (init?.signal?.aborted !== true) record({ t: Date.now() - t0, kind, status: 0, bytes: 0, failed: true });
      throw error;
    }
  }
  function totals() {
    const requests = { results: 0, run: 0, other: 0 };
    let bytes = 0;
    let failed = 0;
    for (const e of events) {
      requests[e.kind] += 1;
      bytes += e.bytes;
      if (e.failed) failed += 1;
    }
    return { requests, total: events.length, bytes, failed };
  }
  return { fetch: meteredFetch, events, totals };
}
