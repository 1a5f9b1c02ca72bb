// Access: webhook secret, per-run read tokens, admin token, CORS, path validation, no key leaks.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { request as httpRequest } from "node:http";
import { API_KEY, SECRETS, WEBHOOK_HEADERS, rowIds, startWorker } from "./worker-fixture.mjs";

const ORIGIN = "https://app.example";
let w;
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0", ALLOWED_ORIGINS: `${ORIGIN}, https://other.example` } });
});
after(() => w.close());

test("a webhook with the right secret finishes the run at once, without a tick", async () => {
  const { jobUid } = w.sim.createJob({ rows: 60, durationMs: 60000, pageSize: 10 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored"); // read the few rows there are
  w.sim.finish(jobUid); // Captain Data (the simulator) POSTs its webhook to the worker
  await w.sim.webhooksSettled();
  const hooks = w.sim.webhooks().filter((h) => h.jobUid === jobUid);
  assert.deepEqual(hooks.map((h) => [h.event, h.status]), [["created", 200], ["succeeded", 202]], "Created is acknowledged, the end accepted");
  const end = await w.untilDone(jobUid, token, { ticking: false });
  assert.equal(end.status, "finished");
  assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(60));
});

test("a webhook with a wrong or missing secret is refused and changes nothing", async () => {
  const { jobUid } = w.sim.createJob({ rows: 40, durationMs: 60000, pageSize: 10 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "running", "the first step stored"); // POLL_INTERVAL_MS 0: no other step comes
  const payload = { job_uid: jobUid, message: "Job successfully finished.", error: false };
  const before = w.sim.stats(jobUid).requests.total;
  for (const headers of [{ "x-webhook-secret": `${SECRETS.WEBHOOK_SECRET}x` }, { "x-webhook-secret": "" }, {}]) {
    const res = await w.webhook(payload, headers);
    assert.equal(res.status, 401, JSON.stringify(headers));
  }
  // No alarm due and nothing in flight: a wrongly accepted webhook would have armed a step.
  await w.untilNoStepDue(jobUid, "nothing stepped by the refused webhooks");
  assert.equal(w.sim.stats(jobUid).requests.total, before, "no step was triggered");
  assert.notEqual((await w.run(jobUid, token)).body.status, "finished");
  const res = await w.webhook({ job_uid: "../etc" });
  assert.equal(res.status, 400, "a good secret with a bad job_uid");
  const untracked = await w.webhook({ job_uid: "never-tracked", message: "Job failed." });
  assert.deepEqual([untracked.status, untracked.body.state], [200, "unknown"]);
});

test("reads need the run's own read token", async () => {
  const a = w.sim.createJob({ rows: 10, durationMs: 0, pageSize: 10 });
  const b = w.sim.createJob({ rows: 10, durationMs: 0, pageSize: 10 });
  const tokenA = await w.track(a.jobUid);
  const tokenB = await w.track(b.jobUid);
  assert.notEqual(tokenA, tokenB);
  assert.equal((await w.run(a.jobUid, tokenA)).status, 200);
  for (const path of [`/v3/jobs/${a.jobUid}`, `/v3/jobs/${a.jobUid}/results`]) {
    for (const headers of [{}, { "x-read-token": tokenB }, { "x-read-token": `${tokenA.slice(0, -2)}AA` }, { "x-read-token": "!!" }]) {
      const res = await w.call(path, { headers });
      assert.equal(res.status, 403, `${path} with ${JSON.stringify(headers)}`);
      assert.ok(!JSON.stringify(res.body).includes("row-"), "no row in a refusal");
    }
  }
  // Tracking twice is idempotent: the new token and the first one both open the run.
  const again = await w.track(a.jobUid);
  for (const token of [tokenA, again]) assert.equal((await w.run(a.jobUid, token)).status, 200);
});

test("a read the token does not open: 403 saying so, the same for a run that exists and one that does not (issue 37, point 5)", async () => {
  const a = w.sim.createJob({ rows: 10, durationMs: 0, pageSize: 10 });
  const b = w.sim.createJob({ rows: 10, durationMs: 0, pageSize: 10 });
  await w.track(a.jobUid);
  const tokenB = await w.track(b.jobUid);
  const answers = [];
  for (const jobUid of [a.jobUid, "never-tracked"]) {
    for (const path of [`/v3/jobs/${jobUid}`, `/v3/jobs/${jobUid}/results`]) answers.push([path, await w.call(path, { headers: { "x-read-token": tokenB } })]);
  }
  answers.push(["no token at all", await w.call(`/v3/jobs/${a.jobUid}`)]);
  // A revoked token: refused by the run's tracker (its epoch), not by the signature.
  await w.call(`/v3/jobs/${b.jobUid}/revoke`, { method: "POST", headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` } });
  answers.push(["a revoked token", await w.call(`/v3/jobs/${b.jobUid}`, { headers: { "x-read-token": tokenB } })]);
  for (const [what, res] of answers) {
    assert.equal(res.status, 403, what);
    assert.deepEqual(res.body, { message: "The read token does not open this run (a token opens one run only, until it expires or is revoked)" }, what);
  }
});

test("schedule and track need the admin token; schedule launches and tracks the run", async () => {
  const body = { job_name: "Enrich", steps: [], inputs: [{ url: "https://www.linkedin.com/in/a" }] };
  assert.equal((await w.schedule("wf-1", body, {})).status, 401);
  assert.equal((await w.schedule("wf-1", body, { authorization: "Bearer nope" })).status, 401);
  assert.equal((await w.call("/v3/jobs/some-run/track", { method: "POST" })).status, 401);
  const launched = await w.schedule("wf-1", body);
  assert.equal(launched.status, 201, JSON.stringify(launched.body));
  assert.equal(launched.body.message, "Bot successfully scheduled.");
  const { job_uid: jobUid, read_token: token } = launched.body;
  assert.equal(w.sim.job(jobUid).name, "Enrich");
  const run = await w.run(jobUid, token);
  assert.deepEqual([run.status, run.body.uid, run.body.workflow_uid], [200, jobUid, "wf-1"]);
  const refused = await w.schedule("wf-1", { job_name: "no inputs" });
  assert.equal(refused.status, 400, "Captain Data's 400 is passed on");
  assert.match(refused.body.message, /inputs/);
});

test("ids are validated as path segments", async () => {
  const headers = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
  // (".." and "%2E%2E" never arrive: URL parsing resolves them before the request is sent.)
  for (const id of ["a%2Fb", "a.b", "-x", "x".repeat(129), "a%20b"]) {
    const res = await w.call(`/v3/jobs/${id}/track`, { method: "POST", headers });
    assert.equal(res.status, 400, id);
  }
  assert.equal((await w.call("/v3/jobs/a/b/track", { method: "POST", headers })).status, 404);
  assert.equal((await w.call("/v3/jobs/abc/track", { headers })).status, 405);
});

test("CORS: configured origins only; a preflight allows the read-token header", async () => {
  const { jobUid } = w.sim.createJob({ rows: 5, durationMs: 0 });
  const token = await w.track(jobUid);
  const ok = await w.call(`/v3/jobs/${jobUid}`, { headers: { origin: ORIGIN, "x-read-token": token } });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("access-control-allow-origin"), ORIGIN);
  const preflight = await w.call(`/v3/jobs/${jobUid}/results`, {
    method: "OPTIONS",
    headers: { origin: ORIGIN, "access-control-request-method": "GET", "access-control-request-headers": "x-read-token" },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-origin"), ORIGIN);
  assert.match(preflight.headers.get("access-control-allow-headers"), /x-read-token/);
  for (const origin of ["https://evil.example", "null", `${ORIGIN}.evil.example`]) {
    const res = await w.call(`/v3/jobs/${jobUid}`, { headers: { origin, "x-read-token": token } });
    assert.equal(res.status, 403, origin);
    assert.equal(res.headers.get("access-control-allow-origin"), null);
  }
});

test("a malformed read token (not base64: length ≡ 1 mod 4) is refused with 403, not a server error", async () => {
  const { jobUid } = w.sim.createJob({ rows: 5, durationMs: 0 });
  await w.track(jobUid);
  for (const token of ["a", "abcde", "A".repeat(41)]) {
    for (const path of [`/v3/jobs/${jobUid}`, `/v3/jobs/${jobUid}/results`]) {
      const res = await w.call(path, { headers: { "x-read-token": token } });
      assert.equal(res.status, 403, `${path} with a ${token.length}-character token`);
    }
  }
});

const MiB = 1024 * 1024;
const padded = (n) => ({ job_uid: "never-tracked", message: "Job failed.", pad: "é".repeat(n) });

/** POSTs `body` over a real socket with node:http (chunked when `chunked`), resolving the status and the body it read. */
function postOverSocket(path, body, { headers = {}, chunked = false } = {}) {
  return new Promise((resolve, reject) => {
    const options = { method: "POST", agent: false, headers: { "content-type": "application/json", ...headers } };
    const req = httpRequest(`${w.origin}${path}`, options, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    if (!chunked) req.setHeader("content-length", body.length);
    // 64 KiB writes, as a client streaming a large upload sends them.
    for (let at = 0; at < body.length; at += 65536) req.write(body.subarray(at, at + 65536));
    req.end();
  });
}

test("the 1 MiB body limit counts bytes: 600 k \"é\" (1.2 MB, 0.6 Mi UTF-16 units) is 413", async () => {
  const tooBig = await w.webhook(padded(600_000));
  assert.deepEqual([tooBig.status, tooBig.body.message], [413, "Body too large: at most 1048576 bytes"]);
  const fits = await w.webhook(padded(500_000)); // 1 000 000 bytes + the rest: under 1 MiB
  assert.deepEqual([fits.status, fits.body.state], [200, "unknown"]);
  const launch = await w.schedule("wf-1", { job_name: "é".repeat(600_000), steps: [], inputs: [{ url: "a" }] });
  assert.equal(launch.status, 413);
});

test("a body past the limit gets its answer, never a reset: 24 MiB webhooks and launches over a real socket", async () => {
  const huge = Buffer.from(JSON.stringify(padded(12 * MiB))); // 24 MiB of "é"
  const chunkedOver = Buffer.from(JSON.stringify(padded(MiB))); // 2 MiB, no content-length
  const admin = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
  const cases = [
    ["webhook, declared length", "/webhooks/captaindata", huge, { headers: WEBHOOK_HEADERS }, 413],
    ["webhook, chunked", "/webhooks/captaindata", chunkedOver, { headers: WEBHOOK_HEADERS, chunked: true }, 413],
    ["webhook with a wrong secret (refused before its body is read)", "/webhooks/captaindata", huge, { headers: { "x-webhook-secret": "nope" } }, 401],
    ["schedule", "/v3/workflows/wf-1/schedule", huge, { headers: admin }, 413],
    ["schedule without the admin token", "/v3/workflows/wf-1/schedule", huge, {}, 401],
    ["a route that takes no body", "/v3/jobs/some-run/results", huge, {}, 405],
  ];
  // Several times over: the race this guards against (an answer, then a close while the client
  // still sends) is lost only now and then.
  for (let round = 0; round < 3; round++) {
    for (const [what, path, body, options, status] of cases) {
      const res = await postOverSocket(path, body, options);
      assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(typeof res.body.message, "string", what);
    }
  }
  // With fetch, as the client saw it ("fetch failed" / ECONNRESET before).
  const res = await fetch(`${w.origin}/webhooks/captaindata`, { method: "POST", headers: WEBHOOK_HEADERS, body: huge });
  assert.deepEqual([res.status, (await res.json()).message], [413, "Body too large: at most 1048576 bytes"]);
});

test("dispatchFetch: the same 413 and 401 for bodies past the limit", async () => {
  const huge = JSON.stringify(padded(12 * MiB));
  const post = (path, headers) => w.mf.dispatchFetch(`${w.origin}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: huge });
  const tooBig = await post("/webhooks/captaindata", WEBHOOK_HEADERS);
  assert.deepEqual([tooBig.status, (await tooBig.json()).message], [413, "Body too large: at most 1048576 bytes"]);
  const refused = await post("/webhooks/captaindata", { "x-webhook-secret": "nope" });
  assert.deepEqual([refused.status, (await refused.json()).message], [401, "Bad webhook secret"]);
  const launch = await post("/v3/workflows/wf-1/schedule", { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` });
  assert.equal(launch.status, 413);
  await launch.arrayBuffer();
});

test("schedule: a job_uid Captain Data answers that is not a valid id is a 502, and nothing is tracked", async () => {
  const before = await w.registryStats();
  const body = { job_name: "x", steps: [], inputs: [{ url: "a" }] };
  try {
    for (const jobUid of ["../../etc", "a b", "", 42]) {
      w.hooks.intercept = (request) =>
        new URL(request.url).pathname.endsWith("/schedule")
          ? Response.json({ message: "Bot successfully scheduled.", job_uid: jobUid, workflow: { uid: "wf-1" } })
          : undefined;
      const res = await w.schedule("wf-1", body);
      assert.equal(res.status, 502, `job_uid ${JSON.stringify(jobUid)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.read_token, undefined);
    }
  } finally {
    w.hooks.intercept = undefined;
  }
  const after = await w.registryStats();
  assert.equal(after.active + after.retired, before.active + before.retired, "no run was added to the registry");
});

test("a run Captain Data does not know is 404 on /results too, not an empty page", async () => {
  const token = await w.track("unknown-to-the-api");
  await w.until(async () => (await w.run("unknown-to-the-api", token)).status === 404, "the run to be reported missing");
  const results = await w.call("/v3/jobs/unknown-to-the-api/results", { headers: { "x-read-token": token } });
  assert.equal(results.status, 404);
  assert.ok(!JSON.stringify(results.body).includes("results"), JSON.stringify(results.body));
});

test("the API key is in no response and no outbound URL; it is only sent as a header", async () => {
  assert.ok(w.responses > 20, "the checks above ran on every response");
  w.assertOutboundClean();
  const apiRequests = w.outbound.filter((r) => !r.refused);
  assert.ok(apiRequests.length > 0);
  assert.ok(apiRequests.every((r) => r.authorization === `x-api-key ${API_KEY}`));
});
