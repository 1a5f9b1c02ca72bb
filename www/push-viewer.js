// One viewer of a run on the worker's stream: a JobPoller with `transport: "push"` and the
// browser's WebSocket, which notes when each batch reached its onBatch (for the delay), what it
// cost the worker (sockets opened, HTTP reads), and whether its rows came once and in order.
import { JobPoller } from "captaindata-poller";

/**
 * @typedef {{ number: number, joined: number, arrivals: { at: number, offset: number, n: number }[],
 *   rows: number, inOrder: boolean, runStatus: string, state: string, error: string | null,
 *   sockets: number, reads: number, stop(): void }} Viewer
 *   `state`: connecting, live, finished, stopped or failed
 */

/**
 * Starts a viewer of `run` (as `POST /__dev/runs` answered it); `changed()` after each event.
 * @returns {Viewer}
 */
export function startViewer(run, number, changed) {
  /** @type {Viewer} */
  const viewer = { number, joined: Date.now(), arrivals: [], rows: 0, inOrder: true, runStatus: "", state: "connecting", error: null, sockets: 0, reads: 0 };
  // The package opens the sockets and sends the requests: counted as they go.
  class CountedSocket extends WebSocket {
    constructor(...args) {
      super(...args);
      viewer.sockets += 1;
      changed();
    }
  }
  const poller = new JobPoller({
    jobUid: run.jobUid,
    baseUrl: run.workerUrl,
    headers: { "x-read-token": run.readToken },
    transport: "push",
    WebSocket: CountedSocket,
    fetch(input, init) {
      viewer.reads += 1;
      changed();
      return fetch(input, init);
    },
    onBatch(batch) {
      viewer.arrivals.push({ at: Date.now(), offset: batch.offset, n: batch.results.length });
      // Row i of a simulated run is `row-i`: a gap, a repeat or a swap shows here.
      const expected = viewer.rows;
      if (batch.offset !== expected || batch.results.some((row, i) => row?.id !== `row-${expected + i}`)) viewer.inOrder = false;
      viewer.rows += batch.results.length;
      changed();
    },
    onStatus(status) {
      viewer.runStatus = status.status;
      if (viewer.state === "connecting") viewer.state = "live";
      changed();
    },
    // The card shows the failure (start() rejects with it too): no console line.
    onError() {},
  });
  poller.start().then(
    (summary) => {
      viewer.state = summary.status === "stopped" ? "stopped" : "finished";
      changed();
    },
    (error) => {
      viewer.state = "failed";
      viewer.error = error?.code ?? String(error);
      changed();
    },
  );
  viewer.stop = () => poller.stop();
  return viewer;
}
