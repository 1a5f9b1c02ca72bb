// A run that ended with rows known missing (issue 37, point 1): the package, with its real wasm
// over real HTTP, delivers every stored row, then ends as "incomplete" with what is missing:
// neither a success nor an error. JobPoller (onComplete, start()), the iterator and pollStep.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import WebSocket, { WebSocketServer } from "ws";
import { JobPoller, pollStep } from "captaindata-poller";
import { JOB_UID, startRowsMissingServer } from "../support/rows-missing-server.mjs";

const FAST = { intervalMs: 20, retry: { retries: 2, minDelayMs: 5, maxDelayMs: 20 }, maxDurationMs: 20_000 };
const ids = (rows) => rows.map((row) => row.id);
const MISSING = {
  code: "ROWS_MISSING",
  batches: ["b-7", "b-8", "b-9", "b\x1b[31m-10\x07", "b-11", "b-12", "b-13"],
  batchCount: 7,
  count: 70,
};

let server;
before(async () => {
  server = await startRowsMissingServer();
});
after(() => server.close());

const fresh = async (options) => {
  await server.close();
  server = await startRowsMissingServer(options);
  return server;
};

test("JobPoller: every stored row first, then onComplete with status incomplete and missing; onError never", async () => {
  await fresh();
  const seen = [];
  const calls = [];
  const poller = new JobPoller({
    jobUid: JOB_UID,
    baseUrl: server.baseUrl,
    ...FAST,
    onBatch: (batch) => void seen.push(...batch.results),
    onComplete: (summary) => calls.push(["complete", summary, seen.length]),
    onError: (error) => calls.push(["error", error]),
  });
  const summary = await poller.start();
  assert.equal(summary.status, "incomplete");
  assert.deepEqual(summary.missing, MISSING);
  assert.equal(summary.totalResults, 30);
  assert.ok(Object.isFrozen(summary));
  assert.deepEqual(ids(seen), ids(server.rows), "every stored row, once, in order");
  assert.deepEqual(calls.map(([kind]) => kind), ["complete"], "onComplete once, onError never");
  assert.equal(calls[0][1], summary);
  assert.equal(calls[0][2], 30, "the rows were delivered before onComplete");
  assert.ok(server.reads.run >= 4, "the run was read until it ended");
});

test("ROWS_CAP_REACHED with rows_missing is incomplete too, with its own code and an unknown count", async () => {
  await fresh({ code: "ROWS_CAP_REACHED", missing: { batches: [], batch_count: 0, count: null, run_status: "RUNNING" } });
  const summary = await new JobPoller({ jobUid: JOB_UID, baseUrl: server.baseUrl, ...FAST }).start();
  assert.equal(summary.status, "incomplete");
  assert.deepEqual(summary.missing, { code: "ROWS_CAP_REACHED", batches: [], batchCount: 0, count: null });
});

test("a shutdown run without rows_missing still fails with JOB_FAILED (nothing else changed)", async () => {
  await fresh({ missing: null });
  const error = await new JobPoller({ jobUid: JOB_UID, baseUrl: server.baseUrl, ...FAST, onError() {} }).start().then(
    () => null,
    (e) => e,
  );
  assert.equal(error?.code, "JOB_FAILED");
});

test("the async iterator ends normally after the last stored batch; its final value is the incomplete summary", async () => {
  await fresh();
  const poller = new JobPoller({ jobUid: JOB_UID, baseUrl: server.baseUrl, ...FAST });
  const rows = [];
  const iterator = poller[Symbol.asyncIterator]();
  let step;
  while (!(step = await iterator.next()).done) rows.push(...step.value.results);
  assert.deepEqual(ids(rows), ids(server.rows));
  assert.equal(step.value?.status, "incomplete");
  assert.deepEqual(step.value.missing, MISSING);
  // A for-await loop gets the same summary from start() after it.
  await fresh();
  const again = new JobPoller({ jobUid: JOB_UID, baseUrl: server.baseUrl, ...FAST });
  let count = 0;
  for await (const batch of again) count += batch.results.length;
  assert.equal(count, 30);
  assert.equal((await again.start()).status, "incomplete");
});

test("pollStep: rounds deliver the stored rows, the last is done with status incomplete and missing, no error", async () => {
  // Two requests a round: the end is resumed from a cursor (which keeps no list of
  // batches: the run is read again for them).
  for (const maxRequests of [3, 2]) {
    await fresh();
    const rows = [];
    let cursor;
    let step;
    for (let round = 0; round < 60; round += 1) {
      step = await pollStep({ jobUid: JOB_UID, baseUrl: server.baseUrl, cursor, maxRequests, deadlineMs: 5_000 });
      rows.push(...step.results);
      cursor = step.cursor;
      if (step.done) break;
      assert.equal(step.error, undefined, `round ${round}: ${step.error?.message}`);
    }
    assert.equal(step.done, true, `maxRequests ${maxRequests}`);
    assert.equal(step.status, "incomplete");
    assert.equal(step.error, undefined);
    assert.deepEqual(step.missing, MISSING);
    assert.deepEqual(ids(rows), ids(server.rows), "every stored row once across the rounds");
  }
});

test("the bindings' state (the Svelte store, the core React and Vue share): status incomplete, every row, summary.missing", async () => {
  await fresh();
  const { createJobPoller } = await import("captaindata-poller/svelte");
  const store = createJobPoller({ jobUid: JOB_UID, baseUrl: server.baseUrl, ...FAST });
  const states = [];
  let unsubscribe;
  const ended = new Promise((resolve) => {
    unsubscribe = store.subscribe((state) => {
      states.push(state.status);
      if (!["idle", "loading", "polling"].includes(state.status)) resolve(state);
    });
  });
  const state = await ended;
  unsubscribe();
  assert.equal(state.status, "incomplete", `statuses: ${states.join(", ")}`);
  assert.equal(state.error, null);
  assert.deepEqual(state.summary.missing, MISSING);
  assert.deepEqual(ids(state.rows), ids(server.rows));
});

test("pushed by the worker's stream: the stored rows, then (the end frame naming rows_missing) incomplete, not JOB_FAILED", async () => {
  await fresh();
  for (let reads = 0; reads < 4; reads += 1) await fetch(`${server.baseUrl}/jobs/${JOB_UID}`); // the run has ended
  // The stream as the worker sends it: every stored row, then an end frame with the run body
  // (its rows_missing) and the error it names for any shutdown run.
  const body = await (await fetch(`${server.baseUrl}/jobs/${JOB_UID}`)).json();
  const sockets = new WebSocketServer({ server: server.http });
  sockets.on("connection", (ws) => {
    ws.send(JSON.stringify({ type: "hello", offset: 0, pageSize: 10, window: 1024 }));
    ws.send(JSON.stringify({ type: "rows", offset: 0, rows: server.rows }));
    ws.send(JSON.stringify({ type: "end", run: body, error: { code: "JOB_FAILED", message: body.error_message } }));
  });
  try {
    const seen = [];
    const errors = [];
    const poller = new JobPoller({
      jobUid: JOB_UID,
      baseUrl: server.baseUrl,
      ...FAST,
      transport: "push",
      WebSocket,
      onBatch: (batch) => void seen.push(...batch.results),
      onError: (error) => errors.push(error),
    });
    const summary = await poller.start();
    assert.equal(summary.status, "incomplete");
    assert.deepEqual(summary.missing, MISSING);
    assert.deepEqual(ids(seen), ids(server.rows), "every row once: the stream's, none again from the poll");
    assert.deepEqual(errors, []);
  } finally {
    sockets.close();
  }
});
