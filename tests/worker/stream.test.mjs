// The stream of a run, in workerd over real sockets: backlog then live in order, each row once,
// to any number of viewers, at the same cost to the API; a finished run at once; big backlogs in
// frames of at most 1 MiB; the token as a subprotocol, never in the URL.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { rowIds, SECRETS, startWorker } from "./worker-fixture.mjs";
import { ids, PROTOCOL, streamUrl, viewer, WebSocket } from "./stream-fixture.mjs";

const MIB = 1 << 20;
let w;
// The runs move on only when a test advances this clock; the worker steps only on ticks (no
// per-run cadence), so two runs stepped by the same ticks make the same requests.
const clock = manualClock(Date.now());
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", PAGE_SIZE: "50" }, sim: { clock, webhook: null } });
});
after(() => w.close());

/** Requests the worker sent to the API for one run. */
const apiRequests = (jobUid) => w.outbound.filter((r) => r.url.includes(`/jobs/${jobUid}`)).map((r) => new URL(r.url).pathname + new URL(r.url).search);

/** Resolves once every viewer holds `n` rows. */
const untilRows = (viewers, n) => w.until(() => viewers.every((v) => v.rows.length >= n), `${viewers.length} viewers with ${n} rows`);

/** Tracks a run and waits for its first step to be stored. */
async function tracked(jobUid) {
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status !== "pending", "first step stored");
  return token;
}

test("100 viewers of one run each get every row once, in order; the API sees what 1 viewer costs", { timeout: 120000 }, async () => {
  const spec = { rows: 300, durationMs: 3000, pageSize: 40, arrival: { bursts: 3 } };
  const one = w.sim.createJob(spec).jobUid;
  const many = w.sim.createJob(spec).jobUid;
  const [tokenOne, tokenMany] = await Promise.all([tracked(one), tracked(many)]);
  const single = [viewer(w.origin, one, tokenOne)];
  const crowd = Array.from({ length: 100 }, () => viewer(w.origin, many, tokenMany));
  await Promise.all([...single, ...crowd].map((v) => v.opened));
  for (const [ms, rows] of [[1000, 100], [1000, 200], [1000, 300]]) {
    clock.advance(ms);
    await w.tick();
    await untilRows([...single, ...crowd], rows);
  }
  await Promise.all([...single, ...crowd].map((v) => v.done));
  for (const v of [...single, ...crowd]) {
    assert.deepEqual(ids(v), rowIds(300));
    const end = v.frames.at(-1);
    assert.equal(end.type, "end");
    assert.equal(end.run.status, "finished");
    assert.equal(end.error, null);
    // Rows frames are contiguous: each starts where the one before ended.
    let next = 0;
    for (const f of v.frames.filter((x) => x.type === "rows")) {
      assert.equal(f.offset, next);
      next += f.rows.length;
    }
  }
  assert.ok(crowd[0].frames.filter((f) => f.type === "rows").length >= 3, "rows came live, batch by batch");
  const paths = (uid) => apiRequests(uid).map((p) => p.replace(uid, "<run>"));
  assert.deepEqual(paths(many), paths(one), "100 viewers cost the API what one does");
  w.assertOutboundClean();
});

test("a viewer reconnecting with its offset gets the rest: nothing lost, nothing twice", async () => {
  const { jobUid } = w.sim.createJob({ rows: 120, durationMs: 2000, pageSize: 40 });
  const token = await tracked(jobUid);
  clock.advance(1000);
  await w.tick();
  const first = viewer(w.origin, jobUid, token);
  await untilRows([first], 60);
  first.ws.close();
  await first.closed;
  clock.advance(500);
  await w.tick(); // rows 60–89 are stored while the viewer is away
  await w.untilRun(jobUid, token, (run) => run.row_count >= 90, "90 rows stored");
  const again = viewer(w.origin, jobUid, token, { after: first.rows.length });
  await untilRows([again], 30);
  assert.equal(again.frames[0].type, "hello");
  assert.equal(again.frames[0].offset, 60);
  clock.advance(500);
  await w.tick();
  await again.done;
  assert.deepEqual([...ids(first), ...ids(again)], rowIds(120));
});

test("a viewer of a finished run gets its rows and the final frame at once, then the socket closes", async () => {
  const { jobUid } = w.sim.createJob({ rows: 75, durationMs: 0, pageSize: 40 });
  const token = await tracked(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "finished", "finished");
  const v = viewer(w.origin, jobUid, token, { after: 5 });
  const { code } = await v.closed;
  assert.equal(code, 1000);
  assert.deepEqual(ids(v), rowIds(70, 5));
  assert.deepEqual(v.frames.map((f) => f.type), ["hello", "rows", "status", "end"]);
  assert.equal(v.frames.at(-1).run.row_count, 75);
});

test("a large backlog streams in frames of at most 1 MiB, every row once", { timeout: 60000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 400, durationMs: 0, pageSize: 100, rowBytes: 12000 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "finished", "finished", { timeoutMs: 60000 });
  const sizes = [];
  const v = viewer(w.origin, jobUid, token);
  v.ws.on("message", (data) => sizes.push(data.length));
  await v.done;
  assert.deepEqual(ids(v), rowIds(400));
  assert.ok(sizes.length >= 6, `4.8 MB in ${sizes.length} frames`);
  assert.ok(Math.max(...sizes) <= MIB, `largest frame ${Math.max(...sizes)} bytes`);
});

test("the read token travels as a subprotocol: without it, or another run's, no socket", async () => {
  const a = w.sim.createJob({ rows: 10, durationMs: 0 }).jobUid;
  const b = w.sim.createJob({ rows: 10, durationMs: 0 }).jobUid;
  const tokenA = await tracked(a);
  const tokenB = await tracked(b);
  for (const protocols of [[PROTOCOL], [PROTOCOL, `token.${tokenB}`], [`token.${tokenA}`]]) {
    const v = viewer(w.origin, a, null, { protocols });
    await assert.rejects(v.opened, /HTTP 403/);
  }
  const v = viewer(w.origin, a, tokenA);
  await v.opened;
  assert.equal(v.ws.protocol, PROTOCOL, "only the protocol is echoed, never the token");
  await v.done;
  assert.deepEqual(ids(v), rowIds(10));
  // Without an upgrade the route says what it is.
  const plain = await w.call(`/v3/jobs/${a}/stream`, { headers: { "sec-websocket-protocol": `${PROTOCOL}, token.${tokenA}` } });
  assert.equal(plain.status, 426);
  // The run's reads say that this worker streams (Captain Data does not send the header).
  const read = await w.run(a, tokenA);
  assert.equal(read.headers.get("x-poller-stream"), "v1");
  assert.ok(!streamUrl(w.origin, a).includes(tokenA));
  assert.equal(typeof WebSocket, "function");
});

test("revoking a run's tokens or deleting the run ends its viewers' streams; a revoked token opens none", async () => {
  const admin = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
  const a = w.sim.createJob({ rows: 40, durationMs: 4000, pageSize: 40 }).jobUid;
  const b = w.sim.createJob({ rows: 40, durationMs: 4000, pageSize: 40 }).jobUid;
  const [tokenA, tokenB] = [await tracked(a), await tracked(b)];
  const [va, vb] = [viewer(w.origin, a, tokenA), viewer(w.origin, b, tokenB)];
  await Promise.all([va.opened, vb.opened]);
  assert.equal((await w.call(`/v3/jobs/${a}/revoke`, { method: "POST", headers: admin })).status, 200);
  assert.deepEqual((await va.done).error?.code, "UNAUTHORIZED");
  await assert.rejects(viewer(w.origin, a, tokenA).opened, /HTTP 403/);
  assert.equal((await w.call(`/v3/jobs/${b}`, { method: "DELETE", headers: admin })).status, 200);
  assert.deepEqual((await vb.done).error?.code, "NOT_FOUND");
});
