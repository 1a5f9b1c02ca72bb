// No configuration value in any answer: the project id is kept out of messages like the key (a
// run's error_message, the logs, any answer); a caller without the admin token gets a generic 500
// for a configuration fault, whose details are in GET /health and the logs; every answer carries
// `cache-control: no-store` and `x-content-type-options: nosniff`.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { pollStep } from "captaindata-poller";
import { refusedSetting } from "../../worker/src/config.js";
import { PROJECT_ID, SECRETS, startWorker } from "./worker-fixture.mjs";

const ADMIN = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
const CANARY = "proj-canary-7Qx9";

/** Every answer and log line of `w`, as one text, to search for a value. */
const everything = async (w, jobUid, token) => {
  const answers = await Promise.all([
    w.run(jobUid, token),
    w.call(`/v3/jobs/${jobUid}/results`, { headers: { "x-read-token": token } }),
    w.call("/health", { headers: ADMIN }),
    w.call(`/v3/jobs/${jobUid}`),
  ]);
  return [...answers.map((a) => JSON.stringify(a.body)), ...w.logs].join("\n");
};

test("a project id that cannot be sent is named (CAPTAINDATA_PROJECT_ID) but never shown: not to readers, not in the logs", async () => {
  for (const projectId of [`${CANARY}\nx`, `${CANARY}€`]) {
    const w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", CAPTAINDATA_PROJECT_ID: projectId }, sim: { webhook: null } });
    try {
      const { jobUid } = w.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 });
      const token = await w.track(jobUid);
      const held = await w.untilRun(jobUid, token, (run) => run.status === "paused", "held for its configuration");
      assert.doesNotMatch(held.error_message, /PROJECT_ID/, "readers are not told the setting");
      const health = await w.call("/health", { headers: ADMIN });
      assert.deepEqual(health.body.problems.map((p) => p.setting), ["CAPTAINDATA_PROJECT_ID"]);
      await w.until(() => w.logs.some((line) => /worker configuration: .*CAPTAINDATA_PROJECT_ID/.test(line)), "the log line");
      assert.ok(!(await everything(w, jobUid, token)).includes(CANARY), "the value is in no answer and no log line");
      assert.equal(w.sim.stats(jobUid).requests.total, 0);
    } finally {
      await w.close();
    }
  }
});

test("a setting the package refuses is named without its value (pollStep's TypeError quotes up to 40 characters)", async () => {
  const error = await pollStep({ jobUid: "x", apiKey: "k", projectId: `${CANARY}\nx`, baseUrl: "http://127.0.0.1:9/v3" }).then(
    () => null,
    (e) => e,
  );
  assert.equal(error?.name, "TypeError");
  const refused = refusedSetting(error);
  assert.equal(refused.setting, "CAPTAINDATA_PROJECT_ID");
  assert.ok(!refused.message.includes(CANARY), refused.message);
});

let w;
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", READ_TOKEN_SECRET: "" }, sim: { webhook: null } });
});
after(() => w.close());

test("a configuration fault: anonymous callers and readers get a generic 500, the operator the setting", async () => {
  for (const [path, init] of [
    ["/v3/jobs/some-run", { headers: { "x-read-token": "v2.1.aaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" } }],
    ["/v3/jobs/some-run/results", {}],
  ]) {
    const res = await w.call(path, init);
    assert.deepEqual([res.status, res.body], [500, { message: "Internal error" }], path);
  }
  const wrong = await w.call("/v3/jobs/some-run/track", { method: "POST", headers: { authorization: "Bearer wrong" } });
  assert.deepEqual([wrong.status, wrong.body], [401, { message: "Not authorized" }], "no token, no detail");
  const admin = await w.call("/v3/jobs/some-run/track", { method: "POST", headers: ADMIN });
  assert.deepEqual([admin.status, admin.body.setting], [500, "READ_TOKEN_SECRET"]);
  const health = await w.call("/health", { headers: ADMIN });
  assert.deepEqual(health.body.problems.map((p) => p.setting), ["READ_TOKEN_SECRET"]);
  assert.ok(w.logs.some((line) => /worker configuration: .*READ_TOKEN_SECRET is not set/.test(line)));
});

test("every answer says cache-control: no-store and x-content-type-options: nosniff", async () => {
  const ok = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", ALLOWED_ORIGINS: "https://app.example" }, sim: { webhook: null } });
  try {
    const { jobUid } = ok.sim.createJob({ rows: 5, durationMs: 0, pageSize: 10 });
    const token = await ok.track(jobUid);
    await ok.untilDone(jobUid, token);
    const read = { headers: { "x-read-token": token } };
    const answers = [
      ["run", await ok.call(`/v3/jobs/${jobUid}`, read), 200],
      ["results", await ok.call(`/v3/jobs/${jobUid}/results`, read), 200],
      ["CORS read", await ok.call(`/v3/jobs/${jobUid}`, { headers: { ...read.headers, origin: "https://app.example" } }), 200],
      ["refused read", await ok.call(`/v3/jobs/${jobUid}`), 403],
      ["unknown run", await ok.call("/v3/jobs/never-tracked", read), 403],
      ["preflight", await ok.call(`/v3/jobs/${jobUid}`, { method: "OPTIONS", headers: { origin: "https://app.example" } }), 204],
      ["track", await ok.call(`/v3/jobs/${jobUid}/track`, { method: "POST", headers: ADMIN }), 200],
      ["health", await ok.call("/health", { headers: ADMIN }), 200],
      ["not found", await ok.call("/nope"), 404],
    ];
    for (const [what, res, status] of answers) {
      assert.equal(res.status, status, what);
      assert.equal(res.headers.get("cache-control"), "no-store", what);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
    }
    assert.ok(!JSON.stringify(answers.map(([, res]) => res.body)).includes(PROJECT_ID), "the project id is in no answer");
  } finally {
    await ok.close();
  }
});
