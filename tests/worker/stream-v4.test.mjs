// A v4 run's rows come by callbacks, not steps: they reach the stream's viewers the same way
// (RunTracker.publish), live, once each and in order, then the final frame; and the package's
// JobPoller reads them from the stream (transport "push") as it reads a v3 run.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { manualClock } from "../../sim/index.js";
import { rowIds } from "./worker-fixture.mjs";
import { advance as advanceClock, launchV4, startV4Worker } from "./v4-fixture.mjs";
import { WebSocket, ids, viewer } from "./stream-fixture.mjs";

let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startV4Worker({ clock, settings: { V4_STATUS_INTERVAL_MS: "200", V4_RECHECK_MS: "100" } });
});
after(() => w.close());

const advance = (ms, step) => advanceClock(w, clock, ms, step);

test("a v4 run's callback rows are pushed to its viewers as they are stored, then the end", async () => {
  w.sim.v4.setDefaults({ rows: 35, pageSize: 10, durationMs: 4000 });
  const res = await launchV4(w, { inputs: [{}] });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const { run_uid: runUid, read_token: token } = res.body;
  const v = viewer(w.origin, runUid, token);
  await v.opened;
  await advance(2000); // two pages came by callback
  await w.until(() => v.rows.length >= 20, "the first two pages pushed");
  assert.ok(v.frames.every((f) => f.type !== "end"), "the run is still going");
  await advance(2000);
  const end = await v.done;
  assert.equal(end.type, "end");
  assert.equal(end.run.status, "finished");
  assert.deepEqual(ids(v), rowIds(35));
});

test('a v4 run launched through the worker, read by a JobPoller with transport "push": every row once and in order as the callbacks bring them, then completion', async () => {
  w.sim.v4.setDefaults({ rows: 35, pageSize: 10, durationMs: 4000 });
  const res = await launchV4(w, { inputs: [{}] });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const { run_uid: runUid, read_token: token } = res.body;
  const seen = { rows: [], batches: [], statuses: [], requests: [], sockets: 0, completes: 0 };
  // Node 20 has no global WebSocket: the `ws` package's, counted.
  class CountedSocket extends WebSocket {
    constructor(...args) {
      super(...args);
      seen.sockets += 1;
    }
  }
  const poller = new JobPoller({
    jobUid: runUid,
    baseUrl: `${w.origin}/v3`,
    headers: { "x-read-token": token },
    transport: "push",
    WebSocket: CountedSocket,
    intervalMs: 40,
    retry: { retries: 4, minDelayMs: 5, maxDelayMs: 50 },
    timeoutMs: 3000,
    maxDurationMs: 60_000, // the bound of this test's wait for the end
    fetch: (url, init) => {
      seen.requests.push(String(url));
      return fetch(url, init);
    },
    onBatch(batch) {
      seen.batches.push(batch);
      seen.rows.push(...batch.results);
    },
    onStatus: (run) => void seen.statuses.push(run),
    onComplete: () => void (seen.completes += 1),
  });
  let ended = false;
  const done = poller.start().finally(() => (ended = true));

  await advance(2000); // two pages came by callback
  await w.until(() => seen.rows.length >= 20, "the first two pages delivered to the JobPoller");
  assert.equal(ended, false, "the run is still going");
  assert.deepEqual(seen.rows.map((r) => r.id), rowIds(20), "early rows, in order, before the run ends");
  await advance(2000);
  const summary = await done;
  assert.equal(summary.status, "finished");
  assert.equal(summary.totalResults, 35);
  assert.deepEqual(seen.rows.map((r) => r.id), rowIds(35), "every row once, in order");
  assert.ok(seen.batches.length > 1, "rows came in several batches while the run went on");
  assert.equal(seen.completes, 1, "onComplete once");
  assert.equal(seen.statuses.at(-1).status, "finished");
  assert.equal(seen.statuses.at(-1).rowCount, 35);
  assert.equal(seen.sockets, 1, "one socket");
  assert.deepEqual(seen.requests, [], "no HTTP read of the worker: the rows were pushed");
});
