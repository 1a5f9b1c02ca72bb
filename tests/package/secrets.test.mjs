// Secret audit: through every outcome the package has (success, each error code, a throwing
// callback reported on the console, pollStep, scheduleWorkflow, the async iterator), the API key
// is sent as the Authorization header and appears nowhere else: not in a URL the simulator
// received, a cursor, an error (message, stack, properties, cause), a callback payload or the
// console. (The worker's stored rows are audited in tests/worker/durability.test.mjs.)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { JobPoller, pollStep, scheduleWorkflow } from "captaindata-poller";
import { API_KEY, FAST, settle, until, useSim } from "./sim-fixture.mjs";

const ctx = useSim();
const WRONG_KEY = "sk_test_wrong_key_5Yp1";
const places = []; // every text the user can see, with where it came from

/** Records `value` (any shape) as text seen at `where`. */
function saw(where, value) {
  if (value instanceof Error || value?.name === "CaptainDataError") {
    const props = Object.getOwnPropertyNames(value).map((n) => `${n}=${String(value[n])}`);
    places.push([where, [value.message, value.stack, String(value.cause ?? ""), ...props].join("\n")]);
    return;
  }
  places.push([where, typeof value === "string" ? value : JSON.stringify(value)]);
}

// The console, for the whole file: the default onCallbackError prints there.
const levels = ["log", "info", "warn", "error", "debug"];
const originals = {};
before(() => {
  for (const level of levels) {
    originals[level] = console[level];
    console[level] = (...args) => {
      for (const a of args) saw(`console.${level}`, a);
      originals[level].apply(console, args);
    };
  }
});
after(() => Object.assign(console, originals));

/** A poller with every callback recording what it is given; returns its outcome. */
async function audited(name, options) {
  const poller = new JobPoller({
    ...ctx.connection,
    ...FAST,
    ...options,
    onBatch: (b) => saw(`${name} onBatch`, { ...b, results: b.results.length }),
    onStatus: (s) => saw(`${name} onStatus`, s),
    onComplete: (s) => saw(`${name} onComplete`, s),
    onError: (e) => saw(`${name} onError`, e),
  });
  const outcome = await settle(poller.start());
  saw(`${name} cursor`, poller.cursor);
  if (outcome.error) saw(`${name} rejection`, outcome.error);
  else saw(`${name} summary`, outcome.value);
  return outcome;
}

const job = (spec) => ctx.sim.createJob({ rows: 40, durationMs: 80, pageSize: 10, ...spec }).jobUid;

test("every outcome, and no trace of the key but the Authorization header", { timeout: 30000 }, async () => {
  const codes = new Set();
  const note = (o) => codes.add(o.error?.code ?? "complete");
  note(await audited("faults", { jobUid: job({ faults: { rate429: 0.2, rate5xx: 0.2, malformedRate: 0.1, retryAfter: 0 } }), retry: { retries: 20, minDelayMs: 1, maxDelayMs: 10 } }));
  note(await audited("wrong credentials", { jobUid: job({ faults: { wrongCredentials: true } }) }));
  note(await audited("wrong key", { jobUid: job({}), apiKey: WRONG_KEY }));
  note(await audited("missing", { jobUid: "no-such-job" }));
  note(await audited("stopped", { jobUid: job({ outcome: "stopped" }) }));
  note(await audited("inputs", { jobUid: job({ outcome: "allInputsFailed" }) }));
  note(await audited("5xx", { jobUid: job({ faults: { rate5xx: 1 } }), retry: { retries: 1, minDelayMs: 1, maxDelayMs: 2 } }));
  note(await audited("malformed", { jobUid: job({ faults: { malformedRate: 1 } }), retry: { retries: 1, minDelayMs: 1, maxDelayMs: 2 } }));
  note(await audited("timeout", { jobUid: job({ durationMs: 60000 }), maxDurationMs: 100 }));
  note(await audited("budget", { jobUid: job({ durationMs: 60000 }), maxRequests: 2 }));
  const aborter = new AbortController();
  const abortedJob = job({ durationMs: 60000 });
  // Aborted while polling is under way: once the simulator has answered its first request.
  until(() => ctx.sim.stats(abortedJob).log.some((e) => e.status !== null), { sim: ctx.sim, what: "a first answer" }).then(() => aborter.abort(new Error("user left")));
  note(await audited("aborted", { jobUid: abortedJob, signal: aborter.signal }));
  assert.deepEqual(
    [...codes].sort(),
    ["ABORTED", "ALL_INPUTS_FAILED", "BAD_RESPONSE", "BUDGET_EXHAUSTED", "JOB_FAILED", "NOT_FOUND", "RETRIES_EXHAUSTED", "TIMEOUT", "UNAUTHORIZED", "complete"],
  );

  // A callback that throws, with no onCallbackError: reported by the default, console.error.
  const throwing = new JobPoller({
    ...ctx.connection,
    ...FAST,
    jobUid: job({}),
    onStatus() {
      throw new Error("render failed");
    },
  });
  saw("throwing summary", await throwing.start());
  assert.ok(places.some(([where, text]) => where === "console.error" && text.includes("render failed")), "the default onCallbackError printed");
  // A consumer that failed: CALLBACK_FAILED, its cursor.
  const failing = new JobPoller({
    ...ctx.connection,
    ...FAST,
    jobUid: job({}),
    onBatch() {
      throw new Error("insert failed");
    },
  });
  saw("callback failed", (await settle(failing.start())).error);
  saw("callback failed cursor", failing.cursor);

  // The async iterator, to its error.
  const iterated = new JobPoller({ ...ctx.connection, ...FAST, jobUid: job({ outcome: "shutdown" }) });
  try {
    for await (const batch of iterated) saw("iterator batch", batch.cursor);
  } catch (error) {
    saw("iterator error", error);
  }

  // pollStep, to success and to an error reported in the step.
  for (const jobUid of [job({ durationMs: 0 }), job({ durationMs: 0, faults: { wrongCredentials: true } })]) {
    let cursor;
    for (let i = 0; i < 20; i++) {
      const step = await pollStep({ ...ctx.connection, jobUid, cursor, retry: FAST.retry });
      saw("step", { ...step, results: step.results.length, error: undefined });
      if (step.error) saw("step error", step.error);
      cursor = step.cursor;
      if (step.done) break;
    }
  }

  // scheduleWorkflow, launched and refused (a wrong key: not echoed either).
  saw("scheduled", await scheduleWorkflow(ctx.connection, "wf-1", { job_name: "x", steps: [], inputs: [{ a: 1 }] }));
  const refused = await settle(scheduleWorkflow({ ...ctx.connection, apiKey: WRONG_KEY }, "wf-1", { inputs: [{ a: 1 }] }));
  assert.ok(refused.error);
  saw("schedule error", refused.error);

  // Every URL the simulator received.
  const log = ctx.sim.stats().log;
  assert.ok(log.length > 50);
  for (const e of log) saw(`request ${e.path}`, e.path);

  const leaks = places.filter(([, text]) => text?.includes(API_KEY) || text?.includes(WRONG_KEY)).map(([where]) => where);
  assert.deepEqual(leaks, [], "places where a key appeared");
  console.log(`secrets: ${places.length} texts audited (${log.length} URLs, cursors, errors, payloads, console lines): no key in any`);
});
