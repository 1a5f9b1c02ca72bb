// Hostile input: what a broken or malicious server sends (sim job spec `hostile`), and options of
// the wrong type or value. Each ends with a clear error (code and message) or is delivered intact,
// in bounded memory, and the rows before it are delivered. The table in docs/hostile-input.md
// is this file's outcomes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { JobPoller, pollStep, scheduleWorkflow } from "captaindata-poller";
import { API_KEY, assertCompleted, assertFailed, assertSilentAfter, recorder, requestsFor, rowIds, settle, useSim } from "./sim-fixture.mjs";

const ctx = useSim();
const RETRY = { retries: 3, minDelayMs: 2, maxDelayMs: 10 };

/** Polls a 30-row job (10-row pages) whose results pages from `hostileFrom` on are hostile. */
async function pollHostile(hostile, spec = {}, extra = {}) {
  const { jobUid } = ctx.sim.createJob({ rows: 30, durationMs: 60, pageSize: 10, hostile, hostileFrom: 1, ...spec });
  const rec = recorder({ retry: RETRY, ...extra });
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const outcome = await settle(poller.start());
  return { jobUid, rec, outcome, log: requestsFor(ctx.sim, jobUid), poller };
}

/** Samples the JS heap and array buffers while `work` runs; resolves with the peak growth in MB. */
async function peakGrowthMb(work) {
  globalThis.gc?.();
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const base = used();
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, used())), 2);
  try {
    const value = await work();
    peak = Math.max(peak, used());
    return { value, mb: (peak - base) / 1e6 };
  } finally {
    clearInterval(sampler);
  }
}

describe("hostile responses", () => {
  test("a 20 MB page: delivered intact, memory growth bounded by a few times the page", { timeout: 30000 }, async () => {
    const { value, mb } = await peakGrowthMb(() => pollHostile("huge", { rows: 10, hostileFrom: 0, durationMs: 0 }));
    const { rec, outcome, log } = value;
    assertCompleted(outcome, rec.seen);
    assert.deepEqual(rec.ids(), rowIds(10));
    assert.ok(rec.seen.rows.every((row) => row.padding.length === 2e6), "every row with its 2 MB field");
    const big = log.filter((e) => e.bytes > 20e6);
    assert.ok(big.length >= 1, "the simulator sent at least one 20 MB page");
    console.log(`hostile: 20 MB page: ${big.length} read, peak JS heap growth ${mb.toFixed(0)} MB`);
    // The page is parsed whole (like fetch().json()); a bounded multiple of it, not a leak per poll.
    assert.ok(mb < 12 * 20 * big.length, `peak heap growth ${mb.toFixed(0)} MB`);
  });

  test("deeply nested JSON (100,000 levels) inside a row: delivered as the row it is", async () => {
    const { rec, outcome } = await pollHostile("deep");
    assertCompleted(outcome, rec.seen);
    assert.deepEqual(rec.ids(), rowIds(30));
    let depth = 0;
    for (let v = rec.seen.rows[10].deep; Array.isArray(v); v = v[0]) depth += 1;
    assert.equal(depth, 100000);
  });

  for (const [hostile, message, delivered] of [
    ["notArray", "malformed response (the results body has no `results` array) after 3 retries", 10],
    ["html", "malformed response (the body is not valid JSON) after 3 retries", 10],
  ]) {
    test(`${hostile}: BAD_RESPONSE after the retries, the rows before it delivered`, async () => {
      const { jobUid, rec, outcome, log } = await pollHostile(hostile);
      assertFailed(outcome, rec.seen, "BAD_RESPONSE");
      assert.equal(outcome.error.message, message);
      assert.deepEqual(rec.ids(), rowIds(delivered));
      assert.equal(log.filter((e) => e.path.includes("page=2")).length, RETRY.retries + 1, "the bad page read retries + 1 times");
      await assertSilentAfter(ctx.sim, jobUid);
    });
  }

  test("paging.next on another origin: BAD_RESPONSE at once, no request leaves for that origin", async () => {
    const calls = [];
    const spy = (url, init) => {
      calls.push(url);
      return fetch(url, init);
    };
    const { jobUid, rec, outcome, log } = await pollHostile("foreignNext", {}, { fetch: spy });
    assertFailed(outcome, rec.seen, "BAD_RESPONSE");
    assert.equal(outcome.error.message, "paging.next points to another origin than baseUrl");
    // The hostile page's own rows were valid: delivered. Nothing after it.
    const n = rec.ids().length;
    assert.ok(n >= 10 && n <= 20, `rows delivered ${n}`);
    assert.deepEqual(rec.ids(), rowIds(n));
    assert.ok(calls.every((url) => url.startsWith(ctx.server.origin)), calls.join(" "));
    assert.equal(log.length, calls.length);
    await assertSilentAfter(ctx.sim, jobUid);
  });

  test("have_next_page with no usable next: BAD_RESPONSE, never a success with rows missing", async () => {
    const { jobUid, rec, outcome } = await pollHostile("unusableNext");
    assertFailed(outcome, rec.seen, "BAD_RESPONSE");
    assert.equal(outcome.error.message, "paging.have_next_page is true but paging.next is missing");
    const n = rec.ids().length;
    assert.ok(n >= 10 && n <= 20, `rows delivered ${n}`);
    assert.deepEqual(rec.ids(), rowIds(n));
    await assertSilentAfter(ctx.sim, jobUid);
  });

  test("pollStep reports the same error as a step result (not a rejection)", async () => {
    const { jobUid } = ctx.sim.createJob({ rows: 30, durationMs: 0, pageSize: 10, hostile: "foreignNext", hostileFrom: 1 });
    const step = await pollStep({ ...ctx.connection, jobUid, retry: RETRY });
    assert.equal(step.done, false, "BAD_RESPONSE is not final: the run is not over");
    assert.equal(step.error.code, "BAD_RESPONSE");
    assert.deepEqual(step.results.map((r) => r.id), rowIds(20));
  });
});

/** [option, bad options, the TypeError message]: one row of docs/hostile-input.md each. */
const BAD_OPTIONS = [
  ["options", null, "Expected `options` to be an object (got null)"],
  ["jobUid", { jobUid: 42 }, "Expected `jobUid` to be a non-empty string (got 42)"],
  ["jobUid", { jobUid: "a/b" }, "Expected `jobUid` to be a run id: letters, digits, '-', '_', '.', '~' (got \"a/b\")"],
  ["apiKey", { apiKey: 42 }, "Expected `apiKey` to be a non-empty string (got number)"],
  ["apiKey", { apiKey: "sk_test_bad\nkey" }, "Expected `apiKey` to be a valid header value"],
  ["projectId", { projectId: 42 }, "Expected `projectId` to be a non-empty string (got number)"],
  ["baseUrl", { baseUrl: "http://example.com/v3" }, "Expected `baseUrl` to be an https URL (http only for localhost, 127.0.0.1 or [::1]) (got \"http://example.com/v3\")"],
  ["baseUrl", { baseUrl: "https://user:pw@api.captaindata.co/v3" }, "Expected `baseUrl` to be a URL without credentials (user:pass@)"],
  ["headers", { headers: { "bad header": "1" } }, "Expected `headers` to be an object of header names and values (got an object)"],
  ["fetch", { fetch: "fetch" }, "Expected `fetch` to be a function (got \"fetch\")"],
  ["timeoutMs", { timeoutMs: 0 }, "Expected `timeoutMs` to be a positive number of milliseconds (got 0)"],
  ["signal", { signal: {} }, "Expected `signal` to be an AbortSignal (got an object)"],
  ["intervalMs", { intervalMs: "1000" }, "Expected `intervalMs` to be a positive number of milliseconds (got \"1000\")"],
  ["intervalMs", { intervalMs: 2 ** 40 }, "Expected `intervalMs` to be a positive number of milliseconds (got 1099511627776)"],
  ["statusEvery", { statusEvery: 1.5 }, "Expected `statusEvery` to be a positive integer (got 1.5)"],
  ["maxDurationMs", { maxDurationMs: -1 }, "Expected `maxDurationMs` to be a positive number of milliseconds (got -1)"],
  ["maxRequests", { maxRequests: 0 }, "Expected `maxRequests` to be a positive integer (got 0)"],
  ["retry", { retry: null }, "Expected `retry` to be an object (got null)"],
  ["retry.retries", { retry: { retries: -1 } }, "Expected `retry.retries` to be a non-negative integer (got -1)"],
  ["retry.maxDelayMs", { retry: { minDelayMs: 100, maxDelayMs: 10 } }, "Expected `retry.maxDelayMs` to be at least `retry.minDelayMs` (got 10)"],
  ["cursor", { cursor: "garbage" }, "Expected `cursor` to be a string from poller.cursor"],
  ["cursor", { cursor: "cdp1.am9iLTJ8MHwwfDB8fA" }, "Expected `cursor` to be a cursor of run job-1 (got one of run job-2)"],
  ["rowKey", { rowKey: "" }, "Expected `rowKey` to be a non-empty string (got \"\")"],
  ["seed", { seed: -1 }, "Expected `seed` to be a non-negative integer (got -1)"],
  ["onBatch", { onBatch: 1 }, "Expected `onBatch` to be a function (got 1)"],
  ["onCallbackError", { onCallbackError: 1 }, "Expected `onCallbackError` to be a function (got 1)"],
];

describe("bad options: a TypeError naming the option, nothing sent", () => {
  const base = () => ({ ...ctx.connection, jobUid: "job-1" });
  for (const [option, patch, message] of BAD_OPTIONS) {
    test(`${option}: ${message}`, () => {
      const before = ctx.sim.stats().log.length;
      assert.throws(
        () => new JobPoller(patch === null ? null : { ...base(), ...patch }),
        (error) => error instanceof TypeError && error.message === message,
      );
      assert.equal(ctx.sim.stats().log.length, before);
    });
  }

  test("no message echoes the API key", () => {
    assert.throws(
      () => new JobPoller({ ...base(), apiKey: `${API_KEY}\nX` }),
      (error) => error instanceof TypeError && /`apiKey`/.test(error.message) && !error.message.includes(API_KEY) && !error.stack.includes(API_KEY),
    );
  });

  test("pollStep and scheduleWorkflow reject bad options with a TypeError naming them", async () => {
    await assert.rejects(pollStep({ ...base(), deadlineMs: "x" }), { name: "TypeError", message: 'Expected `deadlineMs` to be a positive number of milliseconds (got "x")' });
    await assert.rejects(pollStep({ ...base(), maxRequests: -1 }), { name: "TypeError", message: "Expected `maxRequests` to be a positive integer (got -1)" });
    await assert.rejects(scheduleWorkflow(ctx.connection, "a/b", {}), { name: "TypeError", message: /`workflowUid`/ });
    await assert.rejects(scheduleWorkflow(ctx.connection, "wf", "x"), { name: "TypeError", message: 'Expected `body` to be a JSON-serialisable object (got "x")' });
  });

  // Known bug: the message says `payload` (the name of webhookReceived's argument), not `webhook`.
  test("pollStep's `webhook` option: the TypeError names `webhook`", async () => {
    await assert.rejects(pollStep({ ...base(), webhook: "x" }), (error) => error instanceof TypeError && /`webhook`/.test(error.message));
  });
});
