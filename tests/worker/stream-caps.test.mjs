// The stream's caps, in workerd: MAX_STREAM_VIEWERS=0 is no cap (as 0 is for the other caps),
// MAX_STREAM_VIEWERS_PER_TOKEN keeps one token from taking every socket, and a viewer that does
// not ack gets one window of rows and no more (the rest waits in storage, not in memory).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { rowIds, SECRETS, startWorker } from "./worker-fixture.mjs";
import { ids, viewer } from "./stream-fixture.mjs";

const MIB = 1 << 20;
let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", MAX_STREAM_VIEWERS: "0", MAX_STREAM_VIEWERS_PER_TOKEN: "2" }, sim: { clock, webhook: null } });
});
after(() => w.close());

/** A read token of the run, of its own (another expiry signs another token). */
async function tokenOf(jobUid, expiresIn) {
  const res = await w.call(`/v3/jobs/${jobUid}/track`, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ expires_in: expiresIn }),
  });
  assert.ok([200, 201].includes(res.status), JSON.stringify(res.body));
  return res.body.read_token;
}

test("MAX_STREAM_VIEWERS=0 is no cap; MAX_STREAM_VIEWERS_PER_TOKEN refuses a token's third socket, not another token's", async () => {
  const { jobUid } = w.sim.createJob({ rows: 20, durationMs: 2000, pageSize: 20 });
  const [a, b] = [await tokenOf(jobUid, 3600), await tokenOf(jobUid, 3601)];
  const held = [viewer(w.origin, jobUid, a), viewer(w.origin, jobUid, a)];
  await Promise.all(held.map((v) => v.opened));
  await w.until(() => held.every((v) => v.frames.some((f) => f.type === "status")), "two sockets of token a in");
  const third = viewer(w.origin, jobUid, a);
  const refusal = await third.done;
  assert.equal(refusal.type, "error");
  assert.equal(refusal.code, "TOO_MANY_VIEWERS");
  assert.match(refusal.message, /MAX_STREAM_VIEWERS_PER_TOKEN/);
  assert.equal((await third.closed).code, 4429);
  const other = viewer(w.origin, jobUid, b);
  await w.until(() => other.frames.some((f) => f.type === "status"), "token b still gets a socket");
  clock.advance(2000);
  await w.tick();
  for (const v of [...held, other]) {
    assert.equal((await v.done).type, "end");
    assert.deepEqual(ids(v), rowIds(20));
  }
});

test("a viewer that does not ack gets one window of rows and no more; one that acks gets every row", { timeout: 60000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 400, durationMs: 0, pageSize: 100, rowBytes: 12000 });
  const token = await tokenOf(jobUid, 3600);
  await w.untilRun(jobUid, token, (run) => run.status === "finished", "finished", { timeoutMs: 60000 });
  const stalled = viewer(w.origin, jobUid, token, { ack: false });
  const reading = viewer(w.origin, jobUid, token);
  await reading.done;
  assert.deepEqual(ids(reading), rowIds(400));
  // Every row of the reading viewer came after the stalled one joined: the stalled one has what it will get.
  const hello = stalled.frames[0];
  assert.equal(hello.type, "hello");
  assert.equal(hello.window, MIB);
  assert.ok(stalled.rows.length > 0, "it got the first window");
  assert.ok(stalled.bytes <= hello.window + MIB, `a stalled viewer was sent ${stalled.bytes} bytes of 4.8 MB`);
  assert.ok(stalled.rows.length < 400);
  assert.ok(!stalled.frames.some((f) => f.type === "end"));
  // A frame that is not an ack closes the socket.
  stalled.ws.send("hello?");
  assert.equal((await stalled.closed).code, 1003);
});
