// A browser-style JobPoller (no API key, a read token) pointed at the worker gets every row.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { manualClock } from "../../sim/index.js";
import { API_KEY, rowIds, startWorker } from "./worker-fixture.mjs";

let w;
// The simulated runs move on only when a test advances this clock: a run is still going while
// the test needs it, however slow the machine.
const clock = manualClock(Date.now());
before(async () => {
  // The worker polls each run on its own alarm cadence here, as deployed (no tick needed).
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "100", PAGE_SIZE: "25" }, sim: { clock } });
});

/** Resolves (bounded) once the page has seen `n` rows. */
function untilRows(seen, n) {
  return w.until(() => seen.rows.length >= n, `${n} rows delivered`);
}
after(() => w.close());

const FAST = { intervalMs: 40, statusEvery: 2, retry: { retries: 5, minDelayMs: 5, maxDelayMs: 50 }, timeoutMs: 3000, maxDurationMs: 20000 };

/** Records what the page sees, and every request the poller sends to the worker. */
function browserPoller(jobUid, token) {
  const seen = { rows: [], batches: 0, requests: [] };
  const poller = new JobPoller({
    ...FAST,
    jobUid,
    baseUrl: `${w.origin}/v3`,
    headers: { "x-read-token": token },
    fetch: (url, init) => {
      seen.requests.push({ url, headers: new Headers(init?.headers) });
      return fetch(url, init);
    },
    onBatch(batch) {
      seen.batches += 1;
      seen.rows.push(...batch.results);
    },
  });
  return { poller, seen };
}

test("a JobPoller against the worker receives every row once, in order, while the run grows", async () => {
  const { jobUid } = w.sim.createJob({ rows: 180, durationMs: 1500, pageSize: 20 });
  const token = await w.track(jobUid);
  const { poller, seen } = browserPoller(jobUid, token);
  const done = poller.start();
  for (const [ms, rows] of [[500, 60], [500, 120]]) {
    clock.advance(ms); // the API has `rows` rows; the page gets them while the run goes on
    await untilRows(seen, rows);
  }
  clock.advance(500);
  const summary = await done;
  assert.equal(summary.status, "finished");
  assert.equal(summary.totalResults, 180);
  assert.deepEqual(seen.rows.map((r) => r.id), rowIds(180));
  assert.ok(seen.batches > 1, "early rows arrived in several batches");
  assert.ok(seen.requests.every((r) => r.url.startsWith(`${w.origin}/v3/`)), "only the worker was asked");
  assert.ok(seen.requests.every((r) => !r.headers.has("authorization") && !r.url.includes(API_KEY)));
  assert.ok(seen.requests.some((r) => r.url.includes("page=")), "followed the worker's paging.next links");
});

test("a JobPoller resumed from its cursor gets only the rest", async () => {
  const { jobUid } = w.sim.createJob({ rows: 100, durationMs: 2000, pageSize: 20 });
  const token = await w.track(jobUid);
  const first = browserPoller(jobUid, token);
  const { poller } = first;
  const started = poller.start().catch((e) => e);
  clock.advance(800); // 40 rows at the API
  await untilRows(first.seen, 30);
  poller.stop();
  assert.equal((await started)?.status, "stopped", "stop() resolves start() quietly");
  clock.advance(1200); // the run ends at the API
  const cursor = poller.cursor;
  const rest = [];
  await new JobPoller({
    ...FAST,
    jobUid,
    cursor,
    baseUrl: `${w.origin}/v3`,
    headers: { "x-read-token": token },
    onBatch: (b) => rest.push(...b.results),
  }).start();
  assert.deepEqual([...first.seen.rows, ...rest].map((r) => r.id), rowIds(100));
});

test("a JobPoller with another run's token is refused (UNAUTHORIZED), not served", async () => {
  const a = w.sim.createJob({ rows: 10, durationMs: 0 });
  const b = w.sim.createJob({ rows: 10, durationMs: 0 });
  await w.track(a.jobUid);
  const tokenB = await w.track(b.jobUid);
  const { poller, seen } = browserPoller(a.jobUid, tokenB);
  const error = await poller.start().then(() => null, (e) => e);
  assert.equal(error?.code, "UNAUTHORIZED");
  assert.deepEqual(seen.rows, []);
});

test("a run Captain Data does not know ends the JobPoller with NOT_FOUND", async () => {
  const token = await w.track("no-such-run");
  const { poller } = browserPoller("no-such-run", token);
  const error = await poller.start().then(() => null, (e) => e);
  assert.equal(error?.code, "NOT_FOUND");
});
