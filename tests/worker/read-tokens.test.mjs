// Read tokens that end: an expiry signed into the token (set at /track with `expires_in`,
// READ_TOKEN_TTL_SECONDS by default), revocation of one run's tokens (POST /v3/jobs/{uid}/revoke),
// and tokens of the earlier format (no expiry) refused.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, test } from "node:test";
import { SECRETS, startWorker } from "./worker-fixture.mjs";

const ADMIN = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };

let w;
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", READ_TOKEN_TTL_SECONDS: "3600" }, sim: { webhook: null } });
});
after(() => w.close());

function track(jobUid, body) {
  return w.call(`/v3/jobs/${jobUid}/track`, {
    method: "POST",
    headers: { ...ADMIN, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

test("a token carries its expiry: READ_TOKEN_TTL_SECONDS by default, `expires_in` at /track", async () => {
  const { jobUid } = w.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 });
  const before = Date.now();
  const byDefault = await track(jobUid);
  assert.equal(byDefault.status, 201);
  const expiresAt = Date.parse(byDefault.body.read_token_expires_at);
  assert.ok(Math.abs(expiresAt - (before + 3600_000)) < 5000, `expires at ${byDefault.body.read_token_expires_at}`);
  const asked = await track(jobUid, { expires_in: 600 });
  assert.ok(Math.abs(Date.parse(asked.body.read_token_expires_at) - (before + 600_000)) < 5000);
  for (const bad of [0, -1, 1.5, "60", 365 * 86400 + 1]) {
    const res = await track(jobUid, { expires_in: bad });
    assert.equal(res.status, 400, JSON.stringify(bad));
    assert.match(res.body.message, /`expires_in` must be a whole number of seconds from 1 to 31536000/);
  }
  assert.equal((await track(jobUid, [1])).status, 400, "the body is an object");
});

test("an expired token is refused (403), while a fresh one for the same run works", async () => {
  const { jobUid } = w.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 });
  const short = await track(jobUid, { expires_in: 1 });
  const token = short.body.read_token;
  const expiresAt = Date.parse(short.body.read_token_expires_at);
  const first = await w.run(jobUid, token);
  // (On a slow machine the second may be over already: only then may this first read be refused.)
  if (Date.now() < expiresAt) assert.equal(first.status, 200);
  // Read until refused: the refusal must come once the expiry has passed, never before.
  const refusedAt = await w.until(async () => (await w.run(jobUid, token)).status === 403 && Date.now(), "the token to expire", { everyMs: 100 });
  assert.ok(refusedAt >= expiresAt - 50, `refused ${expiresAt - refusedAt} ms before its expiry`);
  assert.equal((await w.call(`/v3/jobs/${jobUid}/results`, { headers: { "x-read-token": token } })).status, 403);
  const fresh = (await track(jobUid)).body.read_token;
  assert.equal((await w.run(jobUid, fresh)).status, 200);
});

test("an expiry or an epoch changed in a token breaks its signature", async () => {
  const { jobUid } = w.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 });
  const token = (await track(jobUid, { expires_in: 60 })).body.read_token;
  const [v, expires, epoch, signature] = token.split(".");
  assert.equal(v, "v2");
  const later = [v, String(Number(expires) + 86400), epoch, signature].join(".");
  const otherEpoch = [v, expires, `${epoch.slice(0, -1)}${epoch.endsWith("A") ? "B" : "A"}`, signature].join(".");
  for (const forged of [later, otherEpoch]) assert.equal((await w.run(jobUid, forged)).status, 403);
  assert.equal((await w.run(jobUid, token)).status, 200);
});

test("POST /v3/jobs/{uid}/revoke (admin) revokes every token of that run only; tracking again issues a working one", async () => {
  const a = w.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 }).jobUid;
  const b = w.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 }).jobUid;
  const tokensA = [(await track(a)).body.read_token, (await track(a, { expires_in: 60 })).body.read_token];
  const tokenB = (await track(b)).body.read_token;
  assert.equal((await w.call(`/v3/jobs/${a}/revoke`, { method: "POST" })).status, 401, "admin only");
  const revoked = await w.call(`/v3/jobs/${a}/revoke`, { method: "POST", headers: ADMIN });
  assert.deepEqual([revoked.status, revoked.body], [200, { job_uid: a, revoked: true }]);
  for (const token of tokensA) {
    assert.equal((await w.run(a, token)).status, 403);
    assert.equal((await w.call(`/v3/jobs/${a}/results`, { headers: { "x-read-token": token } })).status, 403);
  }
  assert.equal((await w.run(b, tokenB)).status, 200, "another run's token still works");
  const renewed = (await track(a)).body.read_token;
  assert.equal((await w.run(a, renewed)).status, 200);
  assert.equal((await w.call("/v3/jobs/never-tracked/revoke", { method: "POST", headers: ADMIN })).status, 404);
});

test("a token of the earlier format (HMAC of the run id, no expiry) is refused", async () => {
  const { jobUid } = w.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 });
  await track(jobUid);
  const v1 = createHmac("sha256", SECRETS.READ_TOKEN_SECRET).update(`captaindata-poller read token v1:${jobUid}`).digest("base64url");
  for (const path of [`/v3/jobs/${jobUid}`, `/v3/jobs/${jobUid}/results`]) {
    assert.equal((await w.call(path, { headers: { "x-read-token": v1 } })).status, 403, path);
  }
});

test("the README's backend helper (examples/worker/track.js) tracks a run and hands a browser what reads it", async () => {
  const { readAccess } = await import("../../examples/worker/track.js");
  const { jobUid } = w.sim.createJob({ rows: 12, durationMs: 0, pageSize: 10 });
  const access = await readAccess(w.origin, SECRETS.ADMIN_TOKEN, jobUid);
  assert.equal(access.baseUrl, `${w.origin}/v3`);
  assert.ok(Math.abs(Date.parse(access.expiresAt) - (Date.now() + 3600_000)) < 10_000);
  // What the browser holds opens this run, and nothing needs the admin token any more.
  const { JobPoller } = await import("captaindata-poller");
  const rows = [];
  await new JobPoller({ jobUid: access.jobUid, baseUrl: access.baseUrl, headers: { "x-read-token": access.readToken }, intervalMs: 20, onBatch: (b) => void rows.push(...b.results) }).start();
  assert.equal(rows.length, 12);
  await assert.rejects(readAccess(w.origin, "not-the-admin-token", jobUid), /HTTP 401/);
});

test("a bad READ_TOKEN_TTL_SECONDS or RETENTION_DAYS is listed in /health; the defaults apply meanwhile", async () => {
  const bad = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", READ_TOKEN_TTL_SECONDS: "0", RETENTION_DAYS: "-1" }, sim: { webhook: null } });
  try {
    const health = await bad.call("/health", { headers: ADMIN });
    assert.deepEqual(
      health.body.problems.map((p) => [p.setting, p.stops_polling]),
      [["RETENTION_DAYS", false], ["READ_TOKEN_TTL_SECONDS", false]],
    );
    const { jobUid } = bad.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 });
    const tracked = await bad.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: ADMIN });
    assert.ok(Math.abs(Date.parse(tracked.body.read_token_expires_at) - (Date.now() + 86400_000)) < 10_000, "the default day");
  } finally {
    await bad.close();
  }
});
