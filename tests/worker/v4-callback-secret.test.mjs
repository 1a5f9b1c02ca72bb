// Issue 34 point 3: a v4 callback is proved by its run's own secret, made at launch (random, per
// run, never WEBHOOK_SECRET) and sent to Captain Data in the callback header; WEBHOOK_SECRET, no
// secret or another run's secret stores nothing. A batch_uid claimed again with other rows is
// refused (409 BATCH_CONFLICT) and logged; an identical duplicate is acknowledged as one.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { SECRETS } from "./worker-fixture.mjs";
import { ADMIN, advance as advanceClock, launchV4Seen, postCallback, startV4Worker } from "./v4-fixture.mjs";

let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startV4Worker({ clock, settings: { V4_STATUS_INTERVAL_MS: "200", V4_RECHECK_MS: "100" } });
});
after(() => w.close());

const advance = (ms, step) => advanceClock(w, clock, ms, step);
const secretHeader = (secret) => ({ "x-callback-secret": secret });
const untilEnded = (runUid, token) => w.untilRun(runUid, token, (run) => run.finish_time !== null, "the worker ended the run");

test("each launch gives Captain Data a secret of its own (not WEBHOOK_SECRET), which the simulator echoes: every callback stored", async () => {
  w.sim.v4.setDefaults({ rows: 20, pageSize: 10, durationMs: 2000 });
  const a = await launchV4Seen(w, { inputs: [{}] });
  const b = await launchV4Seen(w, { inputs: [{}] });
  assert.equal(a.res.status, 201, JSON.stringify(a.res.body));
  assert.match(a.secret, /^[A-Za-z0-9_-]{43}$/, "32 random bytes, base64url");
  assert.notEqual(a.secret, SECRETS.WEBHOOK_SECRET);
  assert.notEqual(a.secret, b.secret, "one secret per launch");
  assert.equal(a.sent.callback.url, `${w.origin}/v4/callbacks`, "the secret is in a header, not in the URL");
  await advance(2000);
  for (const run of [a, b]) {
    const ended = await untilEnded(run.runUid, run.token);
    assert.equal(ended.row_count, 20);
    assert.ok(w.sim.v4.callbacks(run.runUid).every((c) => c.status === 200), "the simulator sent the header its launch body gave");
  }
  w.sim.v4.setDefaults({});
});

test("a callback with WEBHOOK_SECRET, with no secret, or with another run's secret is refused and stores nothing", async () => {
  w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 600_000 });
  const victim = await launchV4Seen(w, { inputs: [{}] });
  const other = await launchV4Seen(w, { inputs: [{}] });
  const forged = (batchUid, status = "RUNNING") => ({
    run: { run_uid: victim.runUid, batch_uid: batchUid, status },
    results: [{ id: "evil" }],
    error: { message: "forged end" },
  });
  const attempts = {
    webhookSecret: await postCallback(w, forged("f1"), secretHeader(SECRETS.WEBHOOK_SECRET)),
    none: await postCallback(w, forged("f2"), {}),
    otherRun: await postCallback(w, forged("f3"), secretHeader(other.secret)),
    wrongShape: await postCallback(w, forged("f4"), secretHeader(`${victim.secret}x`)),
    finalWithWebhookSecret: await postCallback(w, forged("f5", "FAILED"), secretHeader(SECRETS.WEBHOOK_SECRET)),
  };
  console.log(`forged callbacks answered: ${JSON.stringify(Object.fromEntries(Object.entries(attempts).map(([k, r]) => [k, r.status])))}`);
  for (const [what, res] of Object.entries(attempts)) assert.ok([401, 403].includes(res.status), `${what}: ${res.status}`);
  assert.equal(attempts.otherRun.status, 403);
  const run = (await w.run(victim.runUid, victim.token)).body;
  assert.deepEqual([run.row_count, run.finish_time, run.error_message], [0, null, null], "nothing stored, the run not ended");
  // The victim's real batches still come in (a forged batch_uid did not take their place).
  w.sim.v4.stop(victim.runUid);
  await advance(1000);
  const ended = await untilEnded(victim.runUid, victim.token);
  assert.ok(!JSON.stringify(ended).includes("forged"), JSON.stringify(ended));
  assert.ok(!(await w.rows(victim.runUid, victim.token)).some((r) => r.id === "evil"));
  w.sim.v4.setDefaults({});
});

test("the secret never appears in logs, errors, /health or what readers are served", async () => {
  w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 1000 });
  const run = await launchV4Seen(w, { inputs: [{}] });
  // A refused launch whose upstream message quotes the body sent (the secret included).
  w.hooks.intercept = async (request) => {
    if (!request.url.endsWith("/async")) return undefined;
    const sent = await request.text();
    return new Response(JSON.stringify({ message: `bad body: ${sent}` }), { status: 400, headers: { "content-type": "application/json" } });
  };
  const refused = await w.call("/v4/actions/x/async", { method: "POST", headers: ADMIN, body: JSON.stringify({ inputs: [{}] }) });
  w.hooks.intercept = undefined;
  assert.equal(refused.status, 400);
  assert.match(refused.body.message, /\[callback secret\]/, "the quoted secret is replaced");
  await advance(1000);
  const ended = await untilEnded(run.runUid, run.token);
  const served = [
    JSON.stringify(ended),
    JSON.stringify(await w.rows(run.runUid, run.token)),
    JSON.stringify((await w.call("/health", { headers: { authorization: ADMIN.authorization } })).body),
    JSON.stringify(refused.body),
    JSON.stringify(w.sim.v4.deliveries(run.runUid)),
  ];
  assert.ok(served.every((text) => !text.includes(run.secret)), "not in any answer");
  assert.ok(w.logs.every((line) => !line.includes(run.secret)), "not in any log line");
  const { tables } = await w.runStorage(run.runUid);
  assert.ok(tables.includes("v4_run"));
  w.sim.v4.setDefaults({});
});

test("a batch_uid claimed again with other rows is refused (409 BATCH_CONFLICT) and logged; an identical duplicate is a duplicate", async () => {
  w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 600_000 });
  const run = await launchV4Seen(w, { inputs: [{}] });
  const batch = (rows) => ({ run: { run_uid: run.runUid, batch_uid: "batch-x", status: "RUNNING" }, results: rows });
  const headers = secretHeader(run.secret);
  const first = await postCallback(w, batch([{ id: "row-a" }, { id: "row-b" }]), headers);
  assert.deepEqual([first.status, first.body.state], [200, "stored"]);
  const same = await postCallback(w, batch([{ id: "row-a" }, { id: "row-b" }]), headers);
  assert.deepEqual([same.status, same.body.state], [200, "duplicate"]);
  const other = await postCallback(w, batch([{ id: "row-a" }, { id: "row-evil" }]), headers);
  assert.equal(other.status, 409);
  assert.equal(other.body.code, "BATCH_CONFLICT");
  console.log(`batch_uid conflict answered ${other.status} ${other.body.code}`);
  const logged = await w.until(() => w.logs.find((line) => line.includes("BATCH_CONFLICT")), "the conflict logged");
  assert.match(logged, /batch_uid "batch-x"/);
  assert.ok(!logged.includes("row-evil") && !logged.includes(run.secret), "logged without the rows or the secret");
  assert.deepEqual((await w.rows(run.runUid, run.token)).map((r) => r.id), ["row-a", "row-b"], "the first rows kept");
  w.sim.v4.setDefaults({});
});

test("the first final error is kept: a later final with the run's own secret does not overwrite it", async () => {
  w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 600_000 });
  const run = await launchV4Seen(w, { inputs: [{}] });
  const final = (batchUid, message) => ({ run: { run_uid: run.runUid, batch_uid: batchUid, status: "FAILED" }, results: [], error: { message } });
  assert.equal((await postCallback(w, final("final-1", "the first error"), secretHeader(run.secret))).status, 200);
  assert.equal((await postCallback(w, final("final-2", "a later error"), secretHeader(run.secret))).status, 200);
  const ended = await untilEnded(run.runUid, run.token);
  assert.equal(ended.error_message, "the first error");
  w.sim.v4.setDefaults({});
});
