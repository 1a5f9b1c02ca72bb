// Webhooks that cannot be turned against the API key's quota: at most one webhook-triggered step
// per run per WEBHOOK_MIN_GAP_MS (duplicates inside it change nothing), and, when
// WEBHOOK_SIGNING_SECRET is set, an HMAC-SHA-256 signature over the body besides the header secret.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { WEBHOOK_HEADERS, rowIds, startWorker } from "./worker-fixture.mjs";

const GAP_MS = 6000;
const SIGNING_SECRET = "local-webhook-signing-secret";
const sign = (text) => createHmac("sha256", SIGNING_SECRET).update(text).digest("hex");

let w;
// The runs stay "running" at the API for as long as a test needs: only webhooks step them.
const clock = manualClock(Date.now());
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", WEBHOOK_MIN_GAP_MS: String(GAP_MS) }, sim: { clock, webhook: null } });
});
after(() => w.close());

/** The run's steps so far, counted from its requests' step header. */
const steps = (jobUid) => w.requestsPerStep(jobUid).length;

test("a flood of webhooks for one run makes one step per WEBHOOK_MIN_GAP_MS; those inside the gap change nothing", async () => {
  const { jobUid } = w.sim.createJob({ rows: 30, durationMs: 60000, pageSize: 10 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored");
  const payload = { job_uid: jobUid, message: "Job successfully finished.", error: null };
  // The worker starts the gap when the first webhook arrives: after this, whatever the latency.
  const sentAt = Date.now();
  const first = await w.webhook(payload);
  assert.deepEqual([first.status, first.body.state], [202, "accepted"]);
  await w.until(() => steps(jobUid) === 2, "the webhook's step");
  const answers = [];
  // Sent well inside the gap (2.5 s to spare for a webhook's way to the worker on a busy machine).
  for (let i = 0; i < 20 && Date.now() - sentAt < GAP_MS - 2500; i++) answers.push(await w.webhook(payload));
  assert.ok(answers.length >= 3, `${answers.length} webhooks sent inside the gap`);
  assert.deepEqual(new Set(answers.map((a) => `${a.status} ${a.body.state}`)), new Set(["200 throttled"]));
  // No alarm due and nothing in flight: a step the throttled webhooks caused would be one or the other.
  await w.untilNoStepDue(jobUid, "nothing stepped by the throttled webhooks");
  assert.equal(steps(jobUid), 2, "no step for the throttled webhooks");

  // After the gap, a webhook steps the run again; the run ends when the API says so.
  w.sim.finish(jobUid);
  const next = await w.until(async () => {
    const res = await w.webhook(payload);
    return res.body.state === "accepted" && Date.now();
  }, "a webhook accepted after the gap", { everyMs: 100 });
  assert.ok(next - sentAt >= GAP_MS, `accepted ${next - sentAt} ms after the first was sent`);
  const end = await w.untilDone(jobUid, token, { ticking: false });
  assert.equal(end.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(30));
});

test("the gap is per run: another run's webhook is accepted meanwhile", async () => {
  const a = w.sim.createJob({ rows: 10, durationMs: 60000, pageSize: 10 }).jobUid;
  const b = w.sim.createJob({ rows: 10, durationMs: 60000, pageSize: 10 }).jobUid;
  for (const jobUid of [a, b]) {
    const token = await w.track(jobUid);
    await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored");
  }
  const hook = (jobUid) => w.webhook({ job_uid: jobUid, message: "Job failed.", error: "x" });
  assert.equal((await hook(a)).body.state, "accepted");
  assert.equal((await hook(b)).body.state, "accepted");
  assert.equal((await hook(a)).body.state, "throttled");
});

test("with WEBHOOK_SIGNING_SECRET, a webhook needs the header secret and the body's signature", async () => {
  const signed = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", WEBHOOK_SIGNING_SECRET: SIGNING_SECRET }, sim: { webhook: null } });
  try {
    const { jobUid } = signed.sim.createJob({ rows: 20, durationMs: 0, pageSize: 10 });
    const token = await signed.track(jobUid);
    await signed.untilRun(jobUid, token, (run) => run.status !== "pending", "the first step stored");
    const body = JSON.stringify({ job_uid: jobUid, message: "Job successfully finished.", error: null });
    const post = (headers, text = body) =>
      signed.call("/webhooks/captaindata", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text });
    const cases = [
      ["no signature", { ...WEBHOOK_HEADERS }, 401, "Bad webhook signature"],
      ["a wrong signature", { ...WEBHOOK_HEADERS, "x-webhook-signature": sign(`${body} `) }, 401, "Bad webhook signature"],
      ["a signature that is not hex", { ...WEBHOOK_HEADERS, "x-webhook-signature": "zz" }, 401, "Bad webhook signature"],
      ["the right signature, a wrong secret", { "x-webhook-secret": "nope", "x-webhook-signature": sign(body) }, 401, "Bad webhook secret"],
    ];
    for (const [what, headers, status, message] of cases) {
      const res = await post(headers);
      assert.deepEqual([res.status, res.body.message], [status, message], what);
    }
    const good = await post({ ...WEBHOOK_HEADERS, "x-webhook-signature": sign(body) });
    assert.ok([200, 202].includes(good.status), JSON.stringify(good.body));
    assert.ok(["accepted", "done"].includes(good.body.state), good.body.state);
    const prefixed = await post({ ...WEBHOOK_HEADERS, "x-webhook-signature": `sha256=${sign(body).toUpperCase()}` });
    assert.notEqual(prefixed.status, 401, "the sha256= form, any case");
  } finally {
    await signed.close();
  }
});
