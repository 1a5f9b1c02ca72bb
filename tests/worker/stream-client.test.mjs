// JobPoller({ transport }) against the worker in workerd, over real sockets: rows pushed once
// and in order, the same callbacks, iterator, cursor and errors as polling; "auto" switches on
// the worker's header; reconnects, restarts and full streams lose and repeat nothing.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { manualClock } from "../../sim/index.js";
import { rowIds, startWorker } from "./worker-fixture.mjs";
import { WebSocket } from "./stream-fixture.mjs";

let w;
const clock = manualClock(Date.now());
const persist = mkdtempSync(path.join(tmpdir(), "stream-client-"));
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "100", PAGE_SIZE: "25" }, sim: { clock }, persist });
});
after(async () => {
  await w.close();
  rmSync(persist, { recursive: true, force: true });
});

const FAST = { intervalMs: 40, retry: { retries: 4, minDelayMs: 5, maxDelayMs: 50 }, timeoutMs: 3000, maxDurationMs: 60000 };

/** A JobPoller on the worker that records rows, statuses, sockets and HTTP requests. */
function viewerPoller(jobUid, token, options = {}) {
  const seen = { rows: [], batches: [], statuses: [], requests: [], sockets: 0 };
  class CountedSocket extends WebSocket {
    constructor(...args) {
      super(...args);
      seen.sockets += 1;
      seen.url = args[0];
    }
  }
  const poller = new JobPoller({
    ...FAST,
    jobUid,
    baseUrl: `${w.origin}/v3`,
    headers: { "x-read-token": token },
    WebSocket: CountedSocket,
    fetch: (url, init) => {
      seen.requests.push(url);
      return fetch(url, init);
    },
    onBatch(batch) {
      seen.batches.push(batch);
      seen.rows.push(...batch.results);
    },
    onStatus: (run) => seen.statuses.push(run),
    ...options,
  });
  return { poller, seen };
}

const untilRows = (seen, n) => w.until(() => seen.rows.length >= n, `${n} rows delivered`);

async function tracked(spec) {
  const { jobUid } = w.sim.createJob(spec);
  return { jobUid, token: await w.track(jobUid) };
}

test('transport "push": every row once, in order, as the run grows; no HTTP read of the worker', async () => {
  const { jobUid, token } = await tracked({ rows: 150, durationMs: 1500, pageSize: 20 });
  const { poller, seen } = viewerPoller(jobUid, token, { transport: "push" });
  const done = poller.start();
  for (const [ms, rows] of [[500, 50], [500, 100]]) {
    clock.advance(ms);
    await untilRows(seen, rows);
  }
  clock.advance(500);
  const summary = await done;
  assert.equal(summary.status, "finished");
  assert.equal(summary.totalResults, 150);
  assert.deepEqual(seen.rows.map((r) => r.id), rowIds(150));
  assert.ok(seen.batches.length > 1, "rows came in several batches while the run went on");
  assert.deepEqual(seen.requests, [], "no poll of the worker");
  assert.equal(seen.sockets, 1);
  assert.ok(!seen.url.includes(token), "the token is not in the URL");
  assert.equal(seen.statuses.at(-1).status, "finished");
  assert.equal(seen.statuses.at(-1).rowCount, 150);
  assert.equal(poller.cursor, summary.cursor);
  // Each batch's cursor is the engine's: a polling poller resumed from one gets exactly the rest.
  const middle = seen.batches[1];
  const rest = [];
  await new JobPoller({ ...FAST, jobUid, transport: "poll", cursor: middle.cursor, baseUrl: `${w.origin}/v3`, headers: { "x-read-token": token }, onBatch: (b) => rest.push(...b.results) }).start();
  assert.deepEqual(rest.map((r) => r.id), rowIds(150 - middle.offset - middle.results.length, middle.offset + middle.results.length));
});

test('"auto" (the default) polls until the worker says it streams, then pushes from its cursor', async () => {
  const { jobUid, token } = await tracked({ rows: 100, durationMs: 1000, pageSize: 20 });
  clock.advance(500);
  await w.untilRun(jobUid, token, (run) => run.row_count >= 50, "50 rows stored");
  const { poller, seen } = viewerPoller(jobUid, token);
  const done = poller.start();
  await untilRows(seen, 50);
  assert.equal(seen.sockets, 1, "switched to the stream");
  const polled = seen.requests.length;
  clock.advance(500);
  const summary = await done;
  assert.equal(summary.status, "finished");
  assert.deepEqual(seen.rows.map((r) => r.id), rowIds(100));
  assert.ok(polled <= 3, `polled the worker ${polled} times before switching`);
  assert.equal(seen.requests.length, polled, "no poll after the switch");
});

test("the iterator, stop() and the cursor behave as with polling", async () => {
  const { jobUid, token } = await tracked({ rows: 60, durationMs: 1000, pageSize: 20 });
  clock.advance(500);
  const { poller } = viewerPoller(jobUid, token, { transport: "push", onBatch: undefined });
  const got = [];
  for await (const batch of poller) {
    got.push(...batch.results);
    if (got.length >= 30) break; // stops the poller; the cursor is after the last batch taken
  }
  const summary = await poller.start();
  assert.equal(summary.status, "stopped");
  clock.advance(500);
  const { poller: next, seen } = viewerPoller(jobUid, token, { transport: "push", cursor: poller.cursor });
  await next.start();
  // The batch the loop broke on was not taken: it comes again, nothing else does.
  const resumedAt = seen.batches[0].offset;
  assert.ok(resumedAt < got.length, "the batch the loop broke on comes again");
  assert.deepEqual([...got.slice(0, resumedAt), ...seen.rows].map((r) => r.id), rowIds(60));
});

test("a throwing onBatch ends with CALLBACK_FAILED and the cursor before that batch", async () => {
  const { jobUid, token } = await tracked({ rows: 40, durationMs: 0, pageSize: 20 });
  await w.untilRun(jobUid, token, (run) => run.status === "finished", "finished");
  let calls = 0;
  const boom = new Error("consumer down");
  const { poller } = viewerPoller(jobUid, token, {
    transport: "push",
    onBatch() {
      calls += 1;
      throw boom;
    },
  });
  const error = await poller.start().then(() => null, (e) => e);
  assert.equal(error?.code, "CALLBACK_FAILED");
  assert.equal(error.cause, boom);
  assert.equal(calls, 1);
  const { poller: again, seen } = viewerPoller(jobUid, token, { transport: "push", cursor: poller.cursor });
  await again.start();
  assert.deepEqual(seen.rows.map((r) => r.id), rowIds(40), "the failed batch is delivered again");
});

/** A WebSocket that answers with the given frames (or none), then closes. */
function scripted(frames) {
  return class {
    constructor() {
      setTimeout(() => {
        for (const data of frames) this.onmessage?.({ data });
        this.onclose?.({ code: 1006 });
      }, 1);
    }
    close() {}
  };
}

test("a malformed frame is BAD_RESPONSE, never skipped", async () => {
  const cases = [
    ["not JSON", [`{"type":"hello","offset":0,"pageSize":25}`, "{rows"]],
    ["rows from 5 when 0 was next", [`{"type":"hello","offset":0,"pageSize":25}`, `{"type":"rows","offset":5,"rows":[{}]}`]],
    ["unknown type", [`{"type":"hello","offset":0,"pageSize":25}`, `{"type":"surprise"}`]],
  ];
  for (const [why, frames] of cases) {
    const rows = [];
    const poller = new JobPoller({ ...FAST, jobUid: "run-x", transport: "push", baseUrl: `${w.origin}/v3`, WebSocket: scripted(frames), onBatch: (b) => rows.push(...b.results) });
    const error = await poller.start().then(() => null, (e) => e);
    assert.equal(error?.code, "BAD_RESPONSE", why);
    assert.match(error.message, new RegExp(why));
    assert.deepEqual(rows, []);
  }
});

test("a socket that keeps failing falls back to polling the worker from the cursor", async () => {
  const { jobUid, token } = await tracked({ rows: 50, durationMs: 0, pageSize: 20 });
  await w.untilRun(jobUid, token, (run) => run.status === "finished", "finished");
  const { poller, seen } = viewerPoller(jobUid, token, { transport: "push", WebSocket: scripted([]) });
  const summary = await poller.start();
  assert.equal(summary.status, "finished");
  assert.deepEqual(seen.rows.map((r) => r.id), rowIds(50));
  assert.ok(seen.requests.length > 0, "polled the worker");
});

test("a worker restart in the middle (every socket dropped) loses and repeats nothing", { timeout: 90000 }, async () => {
  const { jobUid, token } = await tracked({ rows: 120, durationMs: 1500, pageSize: 20 });
  // Reconnects wait up to 2 s each: enough for a new workerd to start on a busy machine.
  const retry = { retries: 12, minDelayMs: 50, maxDelayMs: 2000 };
  const viewers = Array.from({ length: 5 }, () => viewerPoller(jobUid, token, { transport: "push", retry }));
  const done = viewers.map((v) => v.poller.start());
  clock.advance(500);
  await Promise.all(viewers.map((v) => untilRows(v.seen, 40)));
  await w.restart();
  clock.advance(500);
  await Promise.all(viewers.map((v) => untilRows(v.seen, 80)));
  clock.advance(500);
  const summaries = await Promise.all(done);
  for (const [i, v] of viewers.entries()) {
    assert.equal(summaries[i].status, "finished");
    assert.deepEqual(v.seen.rows.map((r) => r.id), rowIds(120));
    assert.ok(v.seen.sockets >= 2, "reconnected after the restart");
  }
});

test("over MAX_STREAM_VIEWERS: push fails with TOO_MANY_VIEWERS; auto polls the worker instead", { timeout: 90000 }, async () => {
  await w.restart({ MAX_STREAM_VIEWERS: "1" });
  const { jobUid, token } = await tracked({ rows: 30, durationMs: 1000, pageSize: 20 });
  const first = viewerPoller(jobUid, token, { transport: "push" });
  const held = first.poller.start();
  await w.until(() => first.seen.statuses.length > 0, "the first viewer is in");
  const refused = viewerPoller(jobUid, token, { transport: "push" });
  const error = await refused.poller.start().then(() => null, (e) => e);
  assert.equal(error?.code, "TOO_MANY_VIEWERS");
  assert.match(error.message, /MAX_STREAM_VIEWERS/);
  const auto = viewerPoller(jobUid, token);
  const autoDone = auto.poller.start();
  clock.advance(1000);
  assert.equal((await autoDone).status, "finished");
  assert.deepEqual(auto.seen.rows.map((r) => r.id), rowIds(30));
  assert.equal((await held).status, "finished");
  assert.deepEqual(first.seen.rows.map((r) => r.id), rowIds(30));
});
