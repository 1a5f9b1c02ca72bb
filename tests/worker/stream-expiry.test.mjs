// A stream holds no longer than its read token, in workerd: once the token expires, the next
// frame the object would send the socket is a final UNAUTHORIZED, then the socket closes; no
// row committed after the expiry reaches it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { SECRETS, startWorker } from "./worker-fixture.mjs";
import { viewer } from "./stream-fixture.mjs";

let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0" }, sim: { clock, webhook: null } });
});
after(() => w.close());

async function trackFor(jobUid, expiresIn) {
  const res = await w.call(`/v3/jobs/${jobUid}/track`, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ expires_in: expiresIn }),
  });
  assert.ok([200, 201].includes(res.status), JSON.stringify(res.body));
  return { token: res.body.read_token, expiresAt: Date.parse(res.body.read_token_expires_at) };
}

test("a socket whose token expired gets UNAUTHORIZED and is closed before any later row", { timeout: 60000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 40, durationMs: 2000, pageSize: 40 });
  const short = await trackFor(jobUid, 3);
  const v = viewer(w.origin, jobUid, short.token);
  await v.opened;
  await w.until(() => v.frames.some((f) => f.type === "status"), "the viewer joined");
  assert.deepEqual(v.rows, [], "no row yet");
  await w.until(() => Date.now() > short.expiresAt, "the token to expire", { everyMs: 100 });
  // Rows are committed after the expiry: they must not reach the socket.
  clock.advance(2000);
  await w.tick();
  const fresh = await trackFor(jobUid, 600);
  await w.untilRun(jobUid, fresh.token, (run) => run.row_count === 40, "the rows committed");
  const last = await v.done;
  assert.equal(last.type, "end");
  assert.equal(last.run, null);
  assert.equal(last.error?.code, "UNAUTHORIZED");
  assert.match(last.error.message, /expired/);
  assert.equal((await v.closed).code, 1000);
  assert.deepEqual(v.rows, [], "no row after the expiry");
  assert.ok(!v.frames.some((f) => f.type === "rows" || f.type === "part"), "no rows frame");
});

test("an ack after the token expired is answered UNAUTHORIZED and the socket closes", { timeout: 60000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 30, durationMs: 2000, pageSize: 30 });
  const short = await trackFor(jobUid, 2);
  const v = viewer(w.origin, jobUid, short.token, { ack: false });
  await v.opened;
  await w.until(() => v.frames.some((f) => f.type === "status"), "the viewer joined");
  await w.until(() => Date.now() > short.expiresAt, "the token to expire", { everyMs: 100 });
  v.ws.send(JSON.stringify({ type: "ack", offset: 0 }));
  const last = await v.done;
  assert.equal(last.error?.code, "UNAUTHORIZED");
  assert.equal((await v.closed).code, 1000);
});
