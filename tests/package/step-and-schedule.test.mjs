// The cron path: scheduleWorkflow launches a run, pollStep reads it in bounded rounds.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobPoller, pollStep, scheduleWorkflow } from "captaindata-poller";
import { FAST, recorder, requestsFor, rowIds, settle, useSim } from "./sim-fixture.mjs";

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
