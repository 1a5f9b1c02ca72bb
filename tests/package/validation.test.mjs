// Bad input is refused up front with a TypeError naming the option; credentials never leave
// the request headers nor go to another origin.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { JobPoller, pollStep, scheduleWorkflow } from "captaindata-poller";
import { API_KEY, FAST, assertSilentAfter, recorder, requestsFor, settle, useSim } from "./sim-fixture.mjs";

const ctx = useSim();

const base = () => ({ ...ctx.connection, jobUid: "job-1", ...FAST });

describe("option validation", () => {
  const invalid = [
    ["jobUid", { jobUid: undefined }],
    ["jobUid", { jobUid: "" }],
    ["jobUid", { jobUid: 42 }],
    ["jobUid", { jobUid: "a/b" }],
    ["jobUid", { jobUid: ".." }],
    ["jobUid", { jobUid: "../jobs/other" }],
    ["baseUrl", { baseUrl: "http://api.example.com/v3" }],
    ["baseUrl", { baseUrl: "http://10.0.0.8:8790/v3" }],
    ["baseUrl", { baseUrl: "not a url" }],
    ["intervalMs", { intervalMs: -5 }],
    ["intervalMs", { intervalMs: Number.NaN }],
    ["intervalMs", { intervalMs: "100" }],
    ["intervalMs", { intervalMs: Infinity }],
    ["statusEvery", { statusEvery: 0 }],
    ["readMode", { readMode: "sometimes" }],
    ["hiddenIntervalMs", { hiddenIntervalMs: 0 }],
    ["hiddenIntervalMs", { hiddenIntervalMs: "60s" }],
    ["maxRequests", { maxRequests: -1 }],
    ["maxDurationMs", { maxDurationMs: Number.NaN }],
    ["retry", { retry: { retries: 2, minDelayMs: -1, maxDelayMs: 10 } }],
    ["onBatch", { onBatch: 42 }],
    ["onError", { onError: "log it" }],
    ["onComplete", { onComplete: {} }],
    ["onStatus", { onStatus: true }],
    ["signal", { signal: {} }],
    ["fetch", { fetch: "fetch" }],
    ["cursor", { cursor: 12 }],
    ["headers", { headers: "x-token: 1" }],
  ];
  const shown = (value) => (typeof value === "object" && value !== null ? JSON.stringify(value) : String(value));
  for (const [option, patch] of invalid) {
    test(`${option} = ${shown(Object.values(patch)[0])} → TypeError naming ${option}`, () => {
      assert.throws(
        () => new JobPoller({ ...base(), ...patch }),
        (error) => {
          assert.ok(error instanceof TypeError, `${error?.name}: ${error?.message}`);
          assert.match(error.message, new RegExp(option));
          return true;
        },
      );
    });
  }

  test("a projectId that cannot be a header is refused without showing it, like the key", async () => {
    const projectId = "proj-Secret-7731\nX-Injected: 1";
    for (const make of [() => new JobPoller({ ...base(), projectId }), () => pollStep({ ...base(), projectId })]) {
      await assert.rejects(
        async () => make(),
        (error) => {
          assert.ok(error instanceof TypeError, `${error?.name}: ${error?.message}`);
          assert.match(error.message, /projectId/);
          assert.ok(!error.message.includes("proj-Secret"), error.message);
          return true;
        },
      );
    }
  });

  test("a corrupt cursor is refused", () => {
    assert.throws(() => new JobPoller({ ...base(), cursor: "{not a cursor" }), TypeError);
  });

  test("loopback http and any https baseUrl are accepted; constructing sends nothing", async () => {
    const { jobUid } = ctx.sim.createJob({ rows: 5 });
    for (const baseUrl of ["http://localhost:8790/v3", "http://127.0.0.1:1/v3", "https://api.captaindata.co/v3"]) {
      // A remote API is polled at most once a second (see the intervalMs test of mistakes.test.mjs).
      const intervalMs = baseUrl.startsWith("https") ? 1000 : FAST.intervalMs;
      assert.doesNotThrow(() => new JobPoller({ ...base(), baseUrl, intervalMs }));
    }
    new JobPoller({ ...base(), jobUid });
    // Every request the package sends holds a timer from before it is sent: none armed, none sent.
    await assertSilentAfter(ctx.sim, jobUid);
    assert.equal(requestsFor(ctx.sim, jobUid).length, 0);
  });

  test("pollStep validates too", async () => {
    await assert.rejects(async () => pollStep({ ...ctx.connection, jobUid: "a/../b" }), TypeError);
    await assert.rejects(async () => pollStep({ ...ctx.connection, jobUid: "x", maxRequests: -3 }), /maxRequests/);
  });
});

/** A fetch for the `fetch` option that records what it is asked and can rewrite results bodies. */
function spyFetch(rewriteNext) {
  const calls = [];
  const spy = async (input, init) => {
    const request = new Request(input, init);
    calls.push({ url: request.url, authorization: request.headers.get("authorization") });
    const res = await fetch(request);
    if (!rewriteNext || !new URL(request.url).pathname.endsWith("/results") || res.status !== 200) return res;
    const body = await res.json();
    if (body.paging.next) body.paging.next = rewriteNext(body.paging.next);
    return new Response(JSON.stringify(body), { status: 200, headers: res.headers });
  };
  return { spy, calls };
}

describe("origins and secrets", () => {
  const foreign = [
    ["another host", (next) => next.replace(ctx.server.origin, "http://127.0.0.2:9")],
    ["another port", (next) => next.replace(ctx.server.origin, `http://127.0.0.1:${ctx.server.port + 1}`)],
    ["another scheme", (next) => next.replace("http://", "https://")],
  ];
  for (const [what, rewrite] of foreign) {
    test(`a paging.next on ${what} is refused (BAD_RESPONSE) and never requested`, async () => {
      const { jobUid } = ctx.sim.createJob({ rows: 100, durationMs: 0, pageSize: 20 });
      const { spy, calls } = spyFetch(rewrite);
      const rec = recorder({ fetch: spy });
      const outcome = await settle(new JobPoller({ ...ctx.connection, jobUid, ...rec.options }).start());
      assert.equal(outcome.error?.code, "BAD_RESPONSE", `got ${outcome.error?.code ?? "success"}`);
      assert.ok(calls.length > 0, "the injected fetch was used");
      for (const call of calls) assert.equal(new URL(call.url).origin, ctx.server.origin, `requested ${call.url}`);
      assert.equal(calls.length, requestsFor(ctx.sim, jobUid).length, "every call reached the simulator");
      assert.ok(!outcome.error.message.includes(API_KEY));
    });
  }

  test("the API key is only ever in the Authorization header", async () => {
    const leaks = [];
    const check = (where, value) => {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      if (text?.includes(API_KEY) || text?.includes("sk_test_")) leaks.push(where);
    };
    const { jobUid } = ctx.sim.createJob({ rows: 60, durationMs: 150, pageSize: 20 });
    const { spy, calls } = spyFetch();
    const rec = recorder({ fetch: spy });
    const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
    const summary = await poller.start();
    check("summary", summary);
    check("poller.cursor", poller.cursor);
    rec.seen.batches.forEach((b, i) => check(`batch ${i} cursor`, b.cursor));
    rec.seen.statuses.forEach((s, i) => check(`status ${i}`, s));
    for (const call of calls) {
      check(`url ${call.url}`, call.url);
      assert.equal(call.authorization, `x-api-key ${API_KEY}`);
    }

    // Errors: a 404, and a 401 with a wrong key that must not be echoed either.
    for (const patch of [{ jobUid: "missing-job" }, { jobUid, apiKey: "sk_test_wrong_9999" }]) {
      const failed = await settle(new JobPoller({ ...ctx.connection, ...FAST, ...patch }).start());
      assert.ok(failed.error);
      check(
        `error ${failed.error.code}`,
        `${failed.error.message} ${failed.error.stack} ${JSON.stringify(failed.error)} ${String(failed.error.cause ?? "")}`,
      );
    }
    const step = await pollStep({ ...ctx.connection, jobUid, maxRequests: 5, deadlineMs: 2000, retry: FAST.retry });
    check("pollStep result", { ...step, results: [] });
    const scheduled = await settle(
      scheduleWorkflow(ctx.connection, "wf-secrets", { job_name: "x", steps: [], inputs: [{ a: 1 }] }),
    );
    check("scheduleWorkflow result", scheduled.value ?? String(scheduled.error));
    for (const entry of ctx.sim.stats().log) check(`simulator saw ${entry.path}`, entry.path);
    assert.deepEqual(leaks, []);
  });
});
