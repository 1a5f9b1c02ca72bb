// The cron path: scheduleWorkflow launches a run, pollStep reads it in bounded rounds.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobPoller, pollStep, scheduleWorkflow } from "captaindata-poller";
import { startSimServer } from "../../sim/server.mjs";
import { FAST, recorder, requestsFor, rowIds, settle, startSim, useSim } from "./sim-fixture.mjs";

const ctx = useSim({ defaults: { rows: 80, durationMs: 200, pageSize: 20 } });

const BODY = {
  job_name: "Enrich leads",
  steps: [{ step_uid: "step-1", accounts: [], accounts_rotation_enabled: false, parameters: {}, output_column: "out" }],
  inputs: [
    { linkedin_profile_url: "https://www.linkedin.com/in/a" },
    { linkedin_profile_url: "https://www.linkedin.com/in/b" },
  ],
};

test("scheduleWorkflow launches a run that a JobPoller then reads to the end", async () => {
  const launched = await scheduleWorkflow(ctx.connection, "wf-42", BODY);
  assert.equal(typeof launched.jobUid, "string");
  assert.equal(launched.message, "Bot successfully scheduled.");
  const job = ctx.sim.job(launched.jobUid);
  assert.deepEqual([job.workflowUid, job.name], ["wf-42", "Enrich leads"]);
  const schedule = ctx.sim.stats().log.filter((e) => e.kind === "schedule");
  assert.deepEqual(
    schedule.map((e) => [e.method, e.path, e.status]),
    [["POST", "/v3/workflows/wf-42/schedule", 200]],
  );

  const rec = recorder();
  const summary = await new JobPoller({ ...ctx.connection, jobUid: launched.jobUid, ...rec.options }).start();
  assert.equal(summary.totalResults, 80);
  assert.deepEqual(rec.ids(), rowIds(80));
});

test("scheduleWorkflow errors carry codes: a body without inputs, a wrong key", async () => {
  const bad = await settle(scheduleWorkflow(ctx.connection, "wf-42", { job_name: "no inputs" }));
  assert.equal(bad.error?.code, "BAD_RESPONSE", `got ${bad.error?.code}`);
  assert.equal(bad.error.status, 400);
  assert.match(bad.error.message, /inputs/, "the server's message is passed on");
  const denied = await settle(scheduleWorkflow({ ...ctx.connection, apiKey: "nope" }, "wf-42", BODY));
  assert.equal(denied.error?.code, "UNAUTHORIZED");
});

test("pollStep: bounded rounds across ticks reach completion, every row once, never over maxRequests", async () => {
  // A long run, finished on command after two ticks: the first ticks meet a run still going
  // (its rows so far), the later ones the rest, whatever the time between ticks.
  const { jobUid } = ctx.sim.createJob({ rows: 300, durationMs: 600_000, pageSize: 25 });
  const rows = [];
  let cursor;
  let step;
  let ticks = 0;
  do {
    ticks += 1;
    const before = requestsFor(ctx.sim, jobUid).length;
    step = await pollStep({ ...ctx.connection, jobUid, cursor, maxRequests: 3, deadlineMs: 2000, retry: FAST.retry });
    const sent = requestsFor(ctx.sim, jobUid).length - before;
    assert.ok(sent <= 3, `tick ${ticks} sent ${sent} requests`);
    assert.equal(step.requests, sent, "requests reported = requests the server saw");
    assert.equal(step.error, undefined, JSON.stringify(step.error));
    rows.push(...step.results);
    cursor = step.cursor;
    assert.equal(typeof cursor, "string");
    if (ticks === 2) {
      assert.equal(step.done, false, "the run was still going");
      ctx.sim.finish(jobUid);
    }
  } while (!step.done && ticks < 100);
  assert.ok(step.done);
  assert.equal(step.status, "finished");
  assert.ok(ticks > 1, "needed several ticks");
  assert.deepEqual(
    rows.map((r) => r.id),
    rowIds(300),
  );
});

test("pollStep reports a terminal error in the result instead of throwing", async () => {
  const step = await pollStep({
    ...ctx.connection,
    jobUid: "no-such-job",
    maxRequests: 3,
    deadlineMs: 2000,
    retry: FAST.retry,
  });
  assert.equal(step.done, true);
  assert.equal(step.error?.code, "NOT_FOUND");
  assert.deepEqual(step.results, []);
});

test("pollStep after a finished step with its cursor reads nothing again", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 30, durationMs: 0, pageSize: 10 });
  let step = await pollStep({ ...ctx.connection, jobUid, maxRequests: 10, deadlineMs: 2000, retry: FAST.retry });
  assert.deepEqual(
    step.results.map((r) => r.id),
    rowIds(30),
  );
  if (!step.done)
    step = await pollStep({
      ...ctx.connection,
      jobUid,
      cursor: step.cursor,
      maxRequests: 10,
      deadlineMs: 2000,
      retry: FAST.retry,
    });
  assert.equal(step.done, true);
  assert.equal(step.status, "finished");
});

test("pollStep's done is the end for good: a retryable failure (RETRIES_EXHAUSTED) is done: false, and the next step goes on from its cursor", async () => {
  // Three 503s in a row from the second results page on: the step's one retry cannot outlast them.
  const faults = { script: [{ kind: "results", nth: 2, respond: 503, count: 3 }] };
  const { jobUid } = ctx.sim.createJob({ rows: 60, durationMs: 0, pageSize: 20, faults });
  const retry = { retries: 1, minDelayMs: 1, maxDelayMs: 5 };
  const first = await pollStep({ ...ctx.connection, jobUid, maxRequests: 20, deadlineMs: 5000, retry });
  assert.equal(first.error?.code, "RETRIES_EXHAUSTED", JSON.stringify(first.error));
  assert.equal(first.done, false, "not final: the run is not over");
  assert.deepEqual(first.results.map((r) => r.id), rowIds(20), "the rows read before the failure are the step's");
  const rows = [...first.results];
  let step = first;
  for (let tick = 0; tick < 10 && !step.done; tick++) {
    step = await pollStep({ ...ctx.connection, jobUid, cursor: step.cursor, maxRequests: 20, deadlineMs: 5000, retry });
    rows.push(...step.results);
  }
  assert.deepEqual([step.done, step.error, step.status], [true, undefined, "finished"]);
  assert.deepEqual(rows.map((r) => r.id), rowIds(60), "every row once across the failure");
});

test("pollStep's done with an error only for a final one (isFinalError): UNAUTHORIZED", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 10, durationMs: 0, pageSize: 10 });
  const step = await pollStep({ ...ctx.connection, apiKey: "nope", jobUid, retry: FAST.retry });
  assert.deepEqual([step.done, step.error?.code], [true, "UNAUTHORIZED"]);
});

/** Steps from `first`'s cursor until one is done (at most `ticks`); every step's rows, `first`'s included. */
async function stepOn(first, options, ticks = 10) {
  const rows = [...first.results];
  let step = first;
  for (let tick = 0; tick < ticks && !step.done; tick++) {
    step = await pollStep({ ...options, cursor: step.cursor });
    rows.push(...step.results);
  }
  return { rows, last: step };
}

test("pollStep's deadline reached mid-run (a page that does not come in time): done: false, the rows so far, and the next step reads on from the cursor", async () => {
  // The second results page hangs for 10 s; the step's deadline is 400 ms.
  const faults = { script: [{ kind: "results", nth: 2, respond: "slow", ms: 10_000 }] };
  const { jobUid } = ctx.sim.createJob({ rows: 60, durationMs: 0, pageSize: 20, faults });
  const options = { ...ctx.connection, jobUid, maxRequests: 20, retry: FAST.retry };
  const started = Date.now();
  const first = await pollStep({ ...options, deadlineMs: 400 });
  assert.ok(Date.now() - started < 5_000, `the step ended at its deadline, not with the slow answer (${Date.now() - started} ms)`);
  assert.equal(first.done, false, "the run is not over for this cron worker: the time of one step ran out");
  // A deadline is the step's budget, like maxRequests: it ends the step with a cursor, not with
  // an error (the engine's rule: budgets end a cron step; TIMEOUT ends only a JobPoller).
  assert.equal(first.error, undefined, JSON.stringify(first.error));
  assert.deepEqual(first.results.map((r) => r.id), rowIds(20), "the rows read before the deadline are the step's");
  assert.equal(first.requests, 3, "the status, the first page, the page that did not come");
  const { rows, last } = await stepOn(first, { ...options, deadlineMs: 5000 });
  assert.deepEqual([last.done, last.error, last.status], [true, undefined, "finished"]);
  assert.deepEqual(rows.map((r) => r.id), rowIds(60), "every row once across the deadline");
});

test("pollStep on a dropped connection: done: false, RETRIES_EXHAUSTED naming no response, and the next step goes on from its cursor", async () => {
  // The connection is dropped without an answer on the second results page and its retry.
  const faults = { script: [{ kind: "results", nth: 2, respond: "drop", count: 2 }] };
  const { jobUid } = ctx.sim.createJob({ rows: 60, durationMs: 0, pageSize: 20, faults });
  const options = { ...ctx.connection, jobUid, maxRequests: 20, deadlineMs: 5000, retry: { retries: 1, minDelayMs: 1, maxDelayMs: 5 } };
  const first = await pollStep(options);
  assert.equal(first.done, false, "not final: the run is not over");
  assert.equal(first.error?.code, "RETRIES_EXHAUSTED", JSON.stringify(first.error));
  assert.match(first.error.message, /no response/i);
  assert.ok(first.error.cause instanceof Error, "fetch's own failure is kept as the cause");
  assert.deepEqual(first.results.map((r) => r.id), rowIds(20));
  assert.deepEqual(requestsFor(ctx.sim, jobUid).map((e) => e.error ?? e.status), [200, 200, "dropped", "dropped"], "the drops happened");
  const { rows, last } = await stepOn(first, options);
  assert.deepEqual([last.done, last.error, last.status], [true, undefined, "finished"]);
  assert.deepEqual(rows.map((r) => r.id), rowIds(60), "every row once across the drops");
});

test("pollStep with the API unreachable (connection refused) for a tick: done: false, RETRIES_EXHAUSTED, the cursor kept; once it is back the next step goes on", async () => {
  // A simulator of its own, its listener closed for one tick and opened again on the same port
  // (closing disposes only of the simulator's timers; its runs stay).
  let { server, sim, connection } = await startSim();
  const { port } = server;
  const { jobUid } = sim.createJob({ rows: 60, durationMs: 0, pageSize: 20 });
  const options = { ...connection, jobUid, deadlineMs: 5000, retry: { retries: 1, minDelayMs: 1, maxDelayMs: 5 } };
  try {
    const first = await pollStep({ ...options, maxRequests: 2 }); // the status and one page
    assert.deepEqual([first.done, first.error, first.results.map((r) => r.id)], [false, undefined, rowIds(20)]);
    await server.close();

    const before = requestsFor(sim, jobUid).length;
    const refused = await pollStep({ ...options, cursor: first.cursor, maxRequests: 20 });
    assert.equal(refused.done, false, "not final: the API may answer next tick");
    assert.equal(refused.error?.code, "RETRIES_EXHAUSTED", JSON.stringify(refused.error));
    assert.match(refused.error.message, /no response/i);
    assert.match(String(refused.error.cause?.cause?.code), /ECONNREFUSED/, "fetch's own failure is kept as the cause");
    assert.deepEqual(refused.results, []);
    assert.equal(refused.requests, 2, "the request and its one retry");
    assert.equal(requestsFor(sim, jobUid).length, before, "nothing reached the simulator");

    server = await startSimServer({ sim, port });
    const { rows, last } = await stepOn(refused, { ...options, maxRequests: 20 });
    assert.deepEqual([last.done, last.error, last.status], [true, undefined, "finished"]);
    assert.deepEqual([...first.results, ...rows].map((r) => r.id), rowIds(60), "every row once across the refusal");
  } finally {
    await server.close();
  }
});
