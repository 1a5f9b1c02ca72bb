// Mistakes a new user makes, refused or explained at once: a hot interval against the real API,
// a baseUrl without its version, an injected fetch that throws; the JS failure behind an error
// is kept as its `cause`; every error the package rejects with is a CaptainDataError.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CaptainDataError, JobPoller, pollStep, scheduleWorkflow } from "captaindata-poller";
import { FAST, assertFailed, recorder, requestsFor, settle, useSim } from "./sim-fixture.mjs";

const ctx = useSim();

test("intervalMs below 1000 is refused against a remote API, accepted on loopback", () => {
  for (const baseUrl of [undefined, "https://proxy.example.com/v3"]) {
    assert.throws(
      () => new JobPoller({ jobUid: "job-1", baseUrl, intervalMs: 10 }),
      (error) => error instanceof TypeError && /`intervalMs`/.test(error.message) && /1000/.test(error.message),
    );
    assert.doesNotThrow(() => new JobPoller({ jobUid: "job-1", baseUrl, intervalMs: 1000 }));
  }
  for (const baseUrl of ["http://localhost:8790/v3", "http://127.0.0.1:8790/v3", "http://[::1]:8790/v3"]) {
    assert.doesNotThrow(() => new JobPoller({ jobUid: "job-1", baseUrl, intervalMs: 10 }));
  }
});

test("a 404 names the path it came from", async () => {
  const rec = recorder();
  const outcome = await settle(new JobPoller({ ...ctx.connection, jobUid: "no-such-run", ...rec.options }).start());
  assertFailed(outcome, rec.seen, "NOT_FOUND");
  assert.match(outcome.error.message, /GET \/v3\/jobs\/no-such-run\b/);
  assert.doesNotMatch(outcome.error.message, /version/);
});

test("a baseUrl without a version segment: the 404 says so", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 5 });
  const rec = recorder();
  const baseUrl = ctx.server.origin; // the simulator serves /v3 only
  const outcome = await settle(new JobPoller({ ...ctx.connection, baseUrl, jobUid, ...rec.options }).start());
  assertFailed(outcome, rec.seen, "NOT_FOUND");
  assert.match(outcome.error.message, new RegExp(`GET /jobs/${jobUid}`));
  assert.match(outcome.error.message, /no version segment/);
  const launch = await settle(scheduleWorkflow({ ...ctx.connection, baseUrl }, "wf-1", { inputs: [] }));
  assert.equal(launch.error?.code, "NOT_FOUND");
  assert.match(launch.error.message, /POST \/workflows\/wf-1\/schedule; baseUrl has no version segment/);
});

test("an injected fetch that throws fails at once with NETWORK_ERROR, the thrown error as cause", async () => {
  let calls = 0;
  const rec = recorder({
    fetch: () => {
      calls += 1;
      throw new ReferenceError("fetchWithAuth is not defined");
    },
  });
  const outcome = await settle(new JobPoller({ ...ctx.connection, jobUid: "job-1", ...rec.options }).start());
  assertFailed(outcome, rec.seen, "NETWORK_ERROR");
  assert.ok(outcome.error.cause instanceof ReferenceError, String(outcome.error.cause));
  assert.equal(calls, 1, "a programming error is not retried");
});

test("a fetch that rejects (a network failure, a CORS refusal) is retried, then kept as the cause", async () => {
  const refusal = new TypeError("Failed to fetch");
  let calls = 0;
  const rec = recorder({
    retry: { retries: 2, minDelayMs: 1, maxDelayMs: 5 },
    fetch: async () => {
      calls += 1;
      throw refusal;
    },
  });
  const outcome = await settle(new JobPoller({ ...ctx.connection, jobUid: "job-1", ...rec.options }).start());
  assertFailed(outcome, rec.seen, "RETRIES_EXHAUSTED");
  assert.equal(outcome.error.cause, refusal);
  assert.equal(calls, 3);
});

test("every error the package rejects with or returns is a CaptainDataError instance", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 5, faults: { wrongCredentials: true } });
  const step = await pollStep({ ...ctx.connection, jobUid, retry: FAST.retry });
  assert.ok(step.error instanceof CaptainDataError, "pollStep's error");
  assert.equal(step.error.code, "UNAUTHORIZED");
  const refused = await settle(scheduleWorkflow({ ...ctx.connection, apiKey: "wrong" }, "wf-1", { inputs: [] }));
  assert.ok(refused.error instanceof CaptainDataError, "scheduleWorkflow's rejection");
  const unreachable = new TypeError("fetch failed");
  const unsent = await settle(
    scheduleWorkflow({ ...ctx.connection, fetch: () => Promise.reject(unreachable) }, "wf-1", { inputs: [] }),
  );
  assert.ok(unsent.error instanceof CaptainDataError);
  assert.equal(unsent.error.code, "NETWORK_ERROR");
  assert.equal(unsent.error.cause, unreachable, "scheduleWorkflow keeps the cause too");
  assert.equal(requestsFor(ctx.sim, jobUid).length > 0, true);
});

test("CommonJS: require() gives the same API (Node ≥ 20.19 loads ES modules with require)", async () => {
  const { spawnSync } = await import("node:child_process");
  const script = `
    const { JobPoller, CaptainDataError, preload } = require("captaindata-poller");
    preload().then(() => {
      const poller = new JobPoller({ jobUid: "job-1", baseUrl: "http://127.0.0.1:9/v3" });
      console.log(typeof poller.start, new CaptainDataError("ABORTED", "x") instanceof Error);
    });`;
  const out = spawnSync(process.execPath, ["--input-type=commonjs", "-e", script], { encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), "function true");
});
