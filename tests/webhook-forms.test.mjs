// The table of webhook forms (tests/webhook-forms.json) through the package: directly (the
// wasm's classifyWebhook, webhookReceived, pollStep's option) and relayed by a follower tab
// (js/tab-protocol.js, across a structured clone as on a BroadcastChannel). Every path reads
// the raw payload with the crate's one classifier.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { classifyWebhook, JobPoller, pollStep } from "captaindata-poller";
import { TabProtocol } from "../js/tab-protocol.js";
import { FAST, settle, useSim, waitForIdle } from "./package/sim-fixture.mjs";

const { forms } = JSON.parse(readFileSync(new URL("webhook-forms.json", import.meta.url), "utf8"));
const JOB = "job-forms-1";
const withJob = (payload, jobUid = JOB) => ({ ...payload, job_uid: jobUid });

test("directly: classifyWebhook says what the table says; webhookReceived and pollStep take every form", async () => {
  const poller = new JobPoller({ jobUid: JOB, baseUrl: "http://127.0.0.1:9/v3" });
  for (const { name, kind, payload } of forms) {
    assert.equal(classifyWebhook(withJob(payload), JOB), kind, name);
    assert.equal(classifyWebhook(payload), kind, `${name}, without a jobUid`);
    poller.webhookReceived(withJob(payload)); // a hint only: never throws for this run's payload
  }
  assert.throws(() => classifyWebhook(withJob(forms[0].payload, "job-other"), JOB), { name: "TypeError", message: /job_uid/ });
  assert.throws(() => poller.webhookReceived(withJob(forms[0].payload, "job-other")), TypeError);
  assert.throws(() => classifyWebhook("Job failed."), { name: "TypeError", message: /`payload`/ });
  const step = await settle(pollStep({ jobUid: JOB, baseUrl: "http://127.0.0.1:9/v3", webhook: withJob(forms[1].payload, "job-other") }));
  assert.equal(step.error?.name, "TypeError", "pollStep reads its webhook with the same rules");
  poller.free();
});

test("relayed by a follower tab: the leader's poller gets the whole payload, classified the same", () => {
  const leader = new TabProtocol({ id: "leader", offset: 0, cursor: "" });
  const follower = new TabProtocol({ id: "follower", offset: 0, cursor: "" });
  leader.handle({ type: "start" });
  leader.handle({ type: "lock" });
  follower.handle({ type: "start" });
  follower.handle({ type: "queued" });
  for (const { name, kind, payload } of forms) {
    const posted = follower.handle({ type: "webhook", payload: withJob(payload) }).filter((e) => e.type === "post");
    assert.equal(posted.length, 1, name);
    const data = structuredClone(posted[0].message); // what a BroadcastChannel delivers
    const [effect] = leader.handle({ type: "message", data }).filter((e) => e.type === "webhook");
    assert.deepEqual(effect.payload, withJob(payload), `${name}: relayed whole`);
    assert.equal(classifyWebhook(effect.payload, JOB), kind, name);
  }
});

const ctx = useSim();

test("a failure webhook's text reaches JOB_FAILED when the run gives no error message", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10, durationMs: 60000, pageSize: 10, outcome: "stopped" });
  const failure = forms.find((f) => f.kind === "failed" && f.error === "quota exceeded");
  const poller = new JobPoller({ ...ctx.connection, ...FAST, intervalMs: 60000, jobUid, readMode: "status" });
  const outcome = settle(poller.start());
  // The poller has read once and sleeps a minute: only the webhook makes it read again.
  await waitForIdle(ctx.sim, jobUid);
  ctx.sim.finish(jobUid, "stopped");
  poller.webhookReceived(withJob(failure.payload, jobUid));
  const { error } = await outcome;
  assert.equal(error?.code, "JOB_FAILED");
  assert.match(error.message, /quota exceeded/);
});
