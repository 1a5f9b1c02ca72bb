// Shared by the package suites: a simulator on 127.0.0.1, fast poller options, and
// recorders for what a user of the package notices (rows, callbacks, requests made).
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { JobPoller } from "captaindata-poller";
import { startSimServer } from "../../sim/server.mjs";

export const API_KEY = "sk_test_pkg_Q7x2M9vK4242";
export const PROJECT_ID = "sim-project";

/** Fast timings so each scenario ends in well under a second. */
export const FAST = Object.freeze({
  intervalMs: 30,
  statusEvery: 2,
  retry: { retries: 5, minDelayMs: 5, maxDelayMs: 50 },
  timeoutMs: 3000,
  maxDurationMs: 20000,
});

/** Starts a simulator expecting API_KEY/PROJECT_ID; `connection` is what pollers need. */
export async function startSim(options = {}) {
  const server = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 5, ...options });
  const connection = { baseUrl: server.url, apiKey: API_KEY, projectId: PROJECT_ID };
  return { server, sim: server.sim, connection };
}

/**
 * One simulator for the whole test file: started before its tests, closed after them.
 * The returned object is filled in by the `before` hook (`server`, `sim`, `connection`).
 */
export function useSim(options = {}) {
  const ctx = {};
  before(async () => Object.assign(ctx, await startSim(options)));
  after(() => ctx.server?.close());
  return ctx;
}

/** Polls `jobUid` on `ctx`'s simulator to its end with recorded callbacks (`extra` as in `recorder`). */
export async function pollJob(ctx, jobUid, extra = {}) {
  const rec = recorder(extra);
  const poller = new JobPoller({ ...ctx.connection, jobUid, ...rec.options });
  const outcome = await settle(poller.start());
  return { rec, outcome, poller };
}

/** `["row-<from>", …, "row-<from+n-1>"]` */
export function rowIds(n, from = 0) {
  return Array.from({ length: n }, (_, i) => `row-${from + i}`);
}

/** Settles a promise into `{ value }` or `{ error }` so a test can assert either. */
export async function settle(promise) {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

export const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Options that record every callback. `extra` overrides anything (including callbacks,
 * which are then wrapped so the recording still happens).
 */
export function recorder(extra = {}) {
  const seen = { batches: [], rows: [], statuses: [], completes: [], errors: [], callbackErrors: [] };
  const options = {
    ...FAST,
    ...extra,
    onBatch(batch) {
      seen.batches.push(batch);
      seen.rows.push(...batch.results);
      return extra.onBatch?.(batch);
    },
    onStatus(run) {
      seen.statuses.push(run);
      return extra.onStatus?.(run);
    },
    onComplete(summary) {
      seen.completes.push(summary);
      return extra.onComplete?.(summary);
    },
    onError(error) {
      seen.errors.push(error);
      return extra.onError?.(error);
    },
    onCallbackError(error, name) {
      seen.callbackErrors.push({ error, name });
      return extra.onCallbackError?.(error, name);
    },
  };
  return { seen, options, ids: () => seen.rows.map((r) => r.id) };
}

/** Requests the simulator received for a job (its log entries). */
export function requestsFor(sim, jobUid) {
  return sim.stats(jobUid).log;
}

/**
 * Resolves once the job has had requests, all answered, and none new for `quietMs`: the poller
 * is then asleep between polls (nothing in flight that the server has not seen yet).
 */
export async function waitForIdle(sim, jobUid, quietMs = 60) {
  let count = -1;
  for (;;) {
    const log = requestsFor(sim, jobUid);
    if (log.length > 0 && log.length === count && log.every((e) => e.status !== null)) return;
    count = log.length;
    await wait(quietMs);
  }
}

/**
 * Asserts the job receives no request during `ms` after a terminal outcome. Long enough for
 * several intervals and retry delays of FAST.
 */
export async function assertSilentAfter(sim, jobUid, ms = 250) {
  const before = requestsFor(sim, jobUid).length;
  await wait(ms);
  const afterwards = requestsFor(sim, jobUid);
  assert.equal(afterwards.length, before, `requests after the end: ${JSON.stringify(afterwards.slice(before))}`);
}

/** Asserts a terminal package error: a CaptainDataError with the given code, reported once. */
export function assertFailed(outcome, seen, code) {
  assert.ok(
    outcome.error,
    `expected start() to reject with ${code}, it resolved with ${JSON.stringify(outcome.value)}`,
  );
  assert.equal(outcome.error.code, code, `got ${outcome.error.code}: ${outcome.error.message}`);
  assert.ok(outcome.error instanceof Error);
  assert.equal(outcome.error.name, "CaptainDataError");
  assert.equal(seen.errors.length, 1, "onError called once");
  assert.equal(seen.errors[0], outcome.error, "onError gets the error start() rejects with");
  assert.equal(seen.completes.length, 0, "no onComplete after an error");
}

/** Asserts a quiet stop(): start() resolved a "stopped" summary; neither onError nor onComplete. */
export function assertStopped(outcome, seen) {
  assert.ok(!outcome.error, `start() rejected after stop(): ${outcome.error?.code} ${outcome.error?.message}`);
  assert.equal(outcome.value.status, "stopped");
  assert.equal(typeof outcome.value.cursor, "string");
  for (const key of ["totalResults", "requests", "retries", "durationMs"]) assert.equal(typeof outcome.value[key], "number", key);
  assert.deepEqual(seen.errors, [], "no onError after stop()");
  assert.deepEqual(seen.completes, [], "no onComplete after stop()");
}

/** Asserts a successful end: onComplete once with the summary start() resolved with. */
export function assertCompleted(outcome, seen) {
  assert.ok(!outcome.error, `start() rejected: ${outcome.error?.code} ${outcome.error?.message}`);
  assert.equal(seen.completes.length, 1, "onComplete called once");
  assert.equal(seen.errors.length, 0, "no onError");
  assert.deepEqual(seen.completes[0], outcome.value);
}
