// Shared by the package suites: a simulator on 127.0.0.1, fast poller options, and
// recorders for what a user of the package notices (rows, callbacks, requests made).
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { JobPoller } from "captaindata-poller";
import { startSimServer } from "../../sim/server.mjs";
import { PACKAGE_CODE, trackPackageTimers } from "../support/timers.mjs";
import { simChanges, timerChanges, until as untilCondition } from "../support/until.mjs";

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

// The package's timers, seen from outside (tests/support/timers.mjs): "asleep between polls" and
// "nothing left to do" are conditions on the timers the package has pending, not durations.
const timers = trackPackageTimers(PACKAGE_CODE);

/** The delays of the timers the package has pending (its sleeps and its requests' timeouts). */
export function packageTimers() {
  return timers.pending();
}

/**
 * Resolves with `check()`'s value once it is truthy: checked once the microtasks queued so far
 * have run, then after every change of the package's timers and of `sim`'s log. Rejects after
 * `timeoutMs`, a bound for a stuck test only, naming `what`.
 */
export function until(check, { sim, timeoutMs = 30000, what = "a condition" } = {}) {
  const on = sim ? [timerChanges(timers), simChanges(sim)] : [timerChanges(timers)];
  return untilCondition(check, { on, timeoutMs, what, settled: true });
}

/**
 * Resolves once the poller of `jobUid` sleeps between polls: it has made requests (more than
 * `since`, an index in the job's log), the simulator answered every one, and the package holds
 * timers none of which is a request's timeout (`requestTimeoutMs`, FAST's by default) and one of
 * which is at least `minSleepMs` long: nothing is in flight, the next read waits on a sleep.
 */
export function waitForIdle(sim, jobUid, { since = 0, minSleepMs = 0, requestTimeoutMs = FAST.timeoutMs, timeoutMs } = {}) {
  const asleep = () => {
    const log = requestsFor(sim, jobUid);
    const timers = packageTimers();
    return (
      log.length > since &&
      log.every((e) => e.status !== null) &&
      !timers.includes(requestTimeoutMs) &&
      timers.some((ms) => ms >= minSleepMs)
    );
  };
  return until(asleep, { sim, timeoutMs, what: `the poller of ${jobUid} asleep between polls` });
}

/** Resolves after the microtasks queued so far (and those they queue) have run: a webhook or a stop() has been acted on. */
export const afterMicrotasks = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves once the package holds no timer at all: no sleep that could wake a poller, no request
 * in flight, so nothing left that could send one (a poller that goes on polling never gets here).
 */
export function untilQuiet({ sim, timeoutMs = 10000, what = "the package to hold no timer" } = {}) {
  return until(() => packageTimers().length === 0, { sim, timeoutMs, what }).catch((e) => {
    throw new Error(`${e.message} (timers pending: ${packageTimers().join(", ")} ms)`);
  });
}

/**
 * Asserts the job receives no request after a terminal outcome: waits until the package holds no
 * timer at all (no sleep that could wake it, no request in flight: nothing left that could send
 * one), then checks that the simulator saw nothing since the call. A poller that goes on polling
 * always holds a timer, so it fails here (at the bound) instead of passing by luck.
 */
export async function assertSilentAfter(sim, jobUid, { timeoutMs = 10000, sent } = {}) {
  // `sent`: the requests the package made (a `sendCounter`'s list), counted where they leave it.
  if (sent) return assertNothingSentAfter(sim, jobUid, sent, timeoutMs);
  const before = requestsFor(sim, jobUid).length;
  await until(() => packageTimers().length === 0 && requestsFor(sim, jobUid).every((e) => e.status !== null), {
    sim,
    timeoutMs,
    what: `the package to hold no timer after ${jobUid}'s end`,
  }).catch((e) => {
    const left = `timers pending: ${packageTimers().join(", ")} ms; requests since the end: ${requestsFor(sim, jobUid).length - before}`;
    throw new Error(`${e.message} (${left})`);
  });
  const afterwards = requestsFor(sim, jobUid);
  assert.equal(afterwards.length, before, `requests after the end: ${JSON.stringify(afterwards.slice(before))}`);
}

/**
 * A `fetch` for a poller that lists the URLs the package sends, before any byte leaves: unlike
 * the simulator's log, it does not count a request the package aborted on its deadline that the
 * simulator logged afterwards (a busy machine delays the arrival, not the send).
 */
export function sendCounter() {
  const sent = [];
  const counting = (input, init) => {
    sent.push(input instanceof Request ? input.url : String(input));
    return fetch(input, init);
  };
  return { sent, fetch: counting };
}

/** Once the package holds no timer, it sent nothing more than `sent` held at the end. */
async function assertNothingSentAfter(sim, jobUid, sent, timeoutMs) {
  const before = sent.length;
  await until(() => packageTimers().length === 0, { sim, timeoutMs, what: `the package to hold no timer after ${jobUid}'s end` }).catch((e) => {
    throw new Error(`${e.message} (timers pending: ${packageTimers().join(", ")} ms; sent since the end: ${sent.length - before})`);
  });
  assert.equal(sent.length, before, `requests sent after the end: ${JSON.stringify(sent.slice(before))}`);
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
