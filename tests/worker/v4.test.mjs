// Captain Data v4 async runs through the worker (workerd in Miniflare, the simulator as Captain
// Data): the launch adds the key and the worker's callback, callbacks bring the rows once per
// batch, the safety net (status, deliveries, replays) finds what was lost, and readers see a v4
// run in the v3 shapes. The simulated clock moves only when a test says so.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { API_KEY, SECRETS, rowIds } from "./worker-fixture.mjs";
import { ADMIN, advance as advanceClock, launchV4, launchV4Seen, readThroughWorker, startV4Worker } from "./v4-fixture.mjs";

let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startV4Worker({ clock, settings: { V4_STATUS_INTERVAL_MS: "200", V4_RECHECK_MS: "100" } });
});
after(() => w.close());

const advance = (ms, step) => advanceClock(w, clock, ms, step);
const launch = (body, headers, action) => launchV4(w, body, headers, action);

/** The run as readers see it once the worker has ended it. */
function untilEnded(runUid, token) {
  return w.untilRun(runUid, token, (run) => run.finish_time !== null, "the worker ended the run", { timeoutMs: 30000 });
}

/** What a JobPoller reading the worker gets: its rows and its summary (or error). */
async function readWithJobPoller(runUid, token) {
  const rows = [];
  try {
    return await readThroughWorker(w, runUid, token, { intervalMs: 40, maxDurationMs: 20000, rows });
  } catch (error) {
    return { rows, error };
  }
}

test("the launch goes through the worker: the key and its callback added, 201 {run_uid, read_token}; every row once", async () => {
  w.sim.v4.setDefaults({ rows: 35, pageSize: 10, durationMs: 4000 });
  const inputs = [{ linkedin_profile_url: "https://www.linkedin.com/in/someone" }];
  const res = await launch({ inputs, custom_data: { crm: 7 } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body).sort(), ["read_token", "read_token_expires_at", "run_uid"]);
  const { run_uid: runUid, read_token: token } = res.body;
  const run = w.sim.v4.run(runUid);
  assert.equal(run.callbackUrl, `${w.origin}/v4/callbacks`);
  const launchRequest = w.outbound.find((r) => r.url.endsWith("/v4/actions/linkedin-extract-people/async"));
  assert.equal(launchRequest.authorization, null, "the key goes in X-API-Key, not Authorization");

  await advance(2000); // half the run: two pages came by callback
  const early = await w.untilRun(runUid, token, (r) => r.row_count === 20, "the first two pages stored");
  assert.equal(early.status, "running");
  assert.deepEqual((await w.rows(runUid, token)).map((r) => r.id), rowIds(20), "early rows, before the run ends");
  await advance(2000);
  const ended = await untilEnded(runUid, token);
  assert.deepEqual([ended.status, ended.row_count, ended.error_message], ["finished", 35, null]);
  assert.deepEqual((await w.rows(runUid, token)).map((r) => r.id), rowIds(35));
  const read = await readWithJobPoller(runUid, token);
  assert.equal(read.summary?.status, "finished", String(read.error));
  assert.deepEqual(read.rows.map((r) => r.id), rowIds(35));
  // Every callback carried the worker's secret, and the key travelled in no URL.
  assert.ok(w.sim.v4.callbacks(runUid).every((c) => c.status === 200));
  w.assertOutboundClean();
  assert.ok(w.sim.stats().log.every((e) => !e.path.includes(API_KEY)));
});

test("a launch that sets its own callback, lacks the admin token or is refused upstream is not tracked", async () => {
  const launches = w.sim.stats().requests["v4-launch"] ?? 0;
  const own = await launch({ inputs: [{}], callback: { url: "https://elsewhere.example/cb" } });
  assert.deepEqual([own.status, own.body.code], [400, "BAD_REQUEST"]);
  assert.equal((await launch({ inputs: [{}] }, { "content-type": "application/json" })).status, 401);
  const array = await launch([1, 2]);
  assert.deepEqual([array.status, array.body.code], [400, "BAD_REQUEST"]);
  assert.equal(w.sim.stats().requests["v4-launch"] ?? 0, launches, "refused by the worker: nothing sent to Captain Data");
  // Refused by Captain Data: its status and message passed on, with the request's code.
  const previous = w.hooks.intercept;
  w.hooks.intercept = (request) => (request.url.includes("/v4/actions/") ? Response.json({ error_label: "BAD_REQUEST", message: "Unknown parameter `mode`" }, { status: 422 }) : previous?.(request));
  try {
    const refused = await launch({ inputs: [{}], mode: "x" });
    assert.deepEqual([refused.status, refused.body.code, refused.body.message], [422, "BAD_REQUEST", "Unknown parameter `mode`"]);
  } finally {
    w.hooks.intercept = previous;
  }
});

test("a launch with body {} or without usable inputs: 400 BAD_REQUEST naming `inputs`, nothing launched (issue 37, point 5)", async () => {
  const launches = w.sim.stats().requests["v4-launch"] ?? 0;
  const empty = await launch({});
  assert.equal(empty.status, 400);
  assert.deepEqual(empty.body, { message: "`inputs` is missing: the body needs `inputs`, a non-empty array of the action's inputs", code: "BAD_REQUEST" });
  for (const inputs of [[], "a", null]) {
    const res = await launch({ inputs });
    assert.deepEqual([res.status, res.body.code], [400, "BAD_REQUEST"], JSON.stringify(inputs));
    assert.match(res.body.message, /`inputs` must be a non-empty array/);
  }
  const notJson = await w.call("/v4/actions/linkedin-extract-people/async", { method: "POST", headers: ADMIN, body: "{" });
  assert.deepEqual([notJson.status, notJson.body.code, notJson.body.message], [400, "BAD_REQUEST", "Body must be JSON"]);
  assert.equal(w.sim.stats().requests["v4-launch"] ?? 0, launches, "nothing sent to Captain Data");
});

test("a v4 run's number_inputs is the count of inputs its launch sent (issue 37, point 5)", async () => {
  w.sim.v4.setDefaults({ rows: 5, pageSize: 10, durationMs: 1000 });
  const res = await launch({ inputs: [{ a: 1 }, { a: 2 }, { a: 3 }] });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const { run_uid: runUid, read_token: token } = res.body;
  const running = await w.run(runUid, token);
  assert.equal(running.body.number_inputs, 3, "served from the launch on");
  await advance(1000);
  const ended = await untilEnded(runUid, token);
  assert.deepEqual([ended.status, ended.number_inputs], ["finished", 3]);
  w.sim.v4.setDefaults({});
});

test("callbacks: a wrong secret is 401, a malformed body 400; a duplicate or a replay adds nothing", async () => {
  w.sim.v4.setDefaults({ rows: 20, pageSize: 10, durationMs: 2000 });
  const { runUid, token, secret } = await launchV4Seen(w, { inputs: [{}] });
  const forged = { run: { run_uid: runUid, batch_uid: "forged", status: "RUNNING" }, results: [{ id: "evil" }] };
  const CALLBACK = { "x-callback-secret": secret, "content-type": "application/json" };
  const post = (body, headers = CALLBACK) => w.call("/v4/callbacks", { method: "POST", headers, body: JSON.stringify(body) });
  assert.equal((await post(forged, { "x-callback-secret": "wrong" })).status, 401);
  assert.equal((await post(forged, { "x-callback-secret": SECRETS.WEBHOOK_SECRET })).status, 401);
  assert.equal((await post(forged, {})).status, 401);
  assert.equal((await post({ run: { run_uid: runUid, status: "RUNNING" } })).status, 400, "no batch_uid");
  assert.equal((await post({ run: { run_uid: "../x", batch_uid: "b", status: "RUNNING" } })).status, 400);
  await advance(2000);
  await untilEnded(runUid, token);
  const [first] = w.sim.v4.deliveries(runUid);
  const replayed = await fetch(`${w.server.origin}/v4/runs/callbacks/${first.uid}/replay`, { method: "POST", headers: { "x-api-key": API_KEY } });
  assert.equal(replayed.status, 200);
  await w.sim.v4.settled();
  // The replay reached the worker (200), which stored nothing new.
  assert.deepEqual(w.sim.v4.callbacks(runUid).filter((c) => c.replay).map((c) => c.status), [200]);
  assert.deepEqual((await w.rows(runUid, token)).map((r) => r.id), rowIds(20));
});

test("a run whose final callback is lost still ends: its status says so, the deliveries are checked", async () => {
  w.sim.v4.setDefaults({ rows: 30, pageSize: 10, durationMs: 3000, faults: { finalLost: true } });
  const { run_uid: runUid, read_token: token } = (await launch({ inputs: [{}] })).body;
  await advance(3000);
  assert.deepEqual(w.sim.v4.callbacks(runUid).filter((c) => !c.replay).map((c) => c.status), [200, 200, 200], "three pages, no final callback");
  const ended = await untilEnded(runUid, token);
  assert.deepEqual([ended.status, ended.row_count], ["finished", 30]);
  const read = await readWithJobPoller(runUid, token);
  assert.deepEqual(read.rows.map((r) => r.id), rowIds(30));
  // The lost final delivery was replayed (it carried no rows, but the worker cannot know that).
  assert.ok(w.sim.v4.deliveries(runUid).some((d) => d.parent_uid !== null));
});

test("the receiver down for a simulated minute: nothing lost once the replays run", async () => {
  w.sim.v4.setDefaults({ rows: 50, pageSize: 10, durationMs: 50_000 });
  const { run_uid: runUid, read_token: token } = (await launch({ inputs: [{}] })).body;
  w.sim.v4.receiverDown(60_000);
  await advance(50_000, 10_000);
  assert.equal(w.sim.v4.callbacks(runUid).length, 0, "no callback reached the worker");
  assert.ok(w.sim.v4.deliveries(runUid).every((d) => d.status === "FAILED" && d.http_status === 503));
  assert.equal((await w.run(runUid, token)).body.row_count, 0);
  await advance(10_000); // the minute is over; the run ended meanwhile (its status says SUCCEEDED)
  const ended = await untilEnded(runUid, token);
  assert.deepEqual([ended.status, ended.row_count], ["finished", 50]);
  assert.deepEqual((await w.rows(runUid, token)).map((r) => r.id).sort(), rowIds(50).sort());
  // One replay per batch (5 pages and the final) once the receiver is back; those the worker sent
  // while it was still down failed, and the next ones waited (replays are paced).
  const replays = w.sim.v4.deliveries(runUid).filter((d) => d.parent_uid !== null);
  assert.equal(replays.filter((d) => d.status === "SUCCESS").length, 6);
  assert.ok(replays.length <= 12, `${replays.length} replays`);
});

test("v4 outcomes in the v3 shapes: PARTIAL_SUCCEEDED is a warning, FAILED a JOB_FAILED, INVALID an ALL_INPUTS_FAILED", async () => {
  const cases = [
    ["PARTIAL_SUCCEEDED", "warning", null],
    ["FAILED", "shutdown", "JOB_FAILED"],
    ["INVALID", "shutdown", "ALL_INPUTS_FAILED"],
  ];
  const runs = [];
  for (const [outcome] of cases) {
    w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 1000, outcome });
    runs.push((await launch({ inputs: [{}] })).body);
  }
  await advance(1000);
  for (const [i, [outcome, status, code]] of cases.entries()) {
    const { run_uid: runUid, read_token: token } = runs[i];
    const ended = await untilEnded(runUid, token);
    assert.equal(ended.status, status, outcome);
    const read = await readWithJobPoller(runUid, token);
    assert.equal(read.error?.code ?? null, code, outcome);
    if (outcome === "PARTIAL_SUCCEEDED") assert.deepEqual(read.rows.map((r) => r.id), rowIds(10));
  }
});

test("callbacks that beat the launch's answer are refused (404), then replayed once the run is tracked: nothing lost", async () => {
  w.sim.v4.setDefaults({ rows: 20, pageSize: 10, durationMs: 2000 });
  // Captain Data launches the run and sends all its callbacks before its answer reaches the worker.
  w.hooks.intercept = async (request) => {
    if (!request.url.endsWith("/async")) return undefined;
    w.hooks.intercept = undefined;
    const body = await request.arrayBuffer();
    const answer = await w.sim.handle(new Request(request.url, { method: "POST", headers: request.headers, body }));
    await advance(2000);
    return answer;
  };
  const { run_uid: runUid, read_token: token } = (await launch({ inputs: [{}] })).body;
  const early = w.sim.v4.callbacks(runUid).filter((c) => !c.replay);
  assert.deepEqual(early.map((c) => c.status), [404, 404, 404], "refused: the worker did not track the run yet");
  const ended = await untilEnded(runUid, token);
  assert.deepEqual([ended.status, ended.row_count, ended.error_message], ["finished", 20, null]);
  // Every row once. Not in the run's order: the three replays are sent together, and the worker
  // stores batches in the order they arrive (worker README, "Limits").
  const ids = (await w.rows(runUid, token)).map((r) => r.id);
  assert.deepEqual(ids.toSorted(), rowIds(20).toSorted());
  assert.equal(w.sim.v4.deliveries(runUid).filter((d) => d.parent_uid !== null).length, 3, "one replay each");
  w.sim.v4.setDefaults({});
});

test("a callback for a run this worker does not store (deleted, or never launched here) stores nothing", async () => {
  const post = await w.call("/v4/callbacks", {
    method: "POST",
    headers: { "x-callback-secret": "A".repeat(43), "content-type": "application/json" },
    body: JSON.stringify({ run: { run_uid: "0f0e0d0c-0b0a-4909-a807-060504030201", batch_uid: "b", status: "RUNNING" }, results: [{ id: "x" }] }),
  });
  assert.equal(post.status, 404);
});

test("batches that 3 replays do not bring are named when the run ends: ROWS_MISSING, never read as finished", async () => {
  // Every callback of this run is lost, and so is every replay.
  w.sim.v4.setDefaults({ rows: 20, pageSize: 10, durationMs: 2000, faults: { lostRate: 1, replayLostRate: 1 } });
  const { run_uid: runUid, read_token: token } = (await launch({ inputs: [{}] })).body;
  await advance(2000);
  const ended = await untilEnded(runUid, token);
  assert.equal(ended.status, "shutdown", "the run itself succeeded, but rows are missing");
  assert.equal(ended.error_code, "ROWS_MISSING");
  assert.equal(ended.row_count, 0);
  assert.match(ended.error_message, /^The rows of 3 batches could not be recovered after 3 replays each \(batch_uid /);
  for (const b of w.sim.v4.run(runUid).batches) assert.ok(ended.error_message.includes(b.batchUid), b.batchUid);
  const replays = w.sim.v4.deliveries(runUid).filter((d) => d.parent_uid !== null);
  assert.equal(replays.length, 9, "3 replays of each of the 3 deliveries, no more");
  assert.equal(w.sim.v4.callbacks(runUid).length, 0, "nothing ever reached the worker");
  w.sim.v4.setDefaults({});
});

test("deliveries listed FAILED whose batches the worker stored (its 200 lost on the way back) are not replayed: finished, every row once (issue 37, point 5)", async () => {
  w.sim.v4.setDefaults({ rows: 30, pageSize: 10, durationMs: 2000, faults: { unacknowledgedRate: 1 } });
  const res = await launch({ inputs: [{}] });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const { run_uid: runUid, read_token: token } = res.body;
  await advance(2000);
  const ended = await untilEnded(runUid, token);
  const deliveries = w.sim.v4.deliveries(runUid);
  assert.ok(deliveries.filter((d) => d.parent_uid === null).every((d) => d.status === "FAILED"), "every delivery listed FAILED");
  assert.deepEqual(deliveries.filter((d) => d.parent_uid !== null), [], "no replay sent");
  assert.deepEqual([ended.status, ended.error_code, ended.row_count], ["finished", null, 30]);
  assert.deepEqual((await w.rows(runUid, token)).map((r) => r.id), rowIds(30));
  w.sim.v4.setDefaults({});
});

test("without PUBLIC_URL a launch is refused before anything is sent, naming the setting; /health lists a wrong one", async () => {
  await w.restart({ PUBLIC_URL: "" });
  const launches = w.sim.stats().requests["v4-launch"];
  const res = await launch({ inputs: [{}] });
  assert.equal(res.status, 500);
  assert.match(res.body.message, /PUBLIC_URL/);
  assert.equal(w.sim.stats().requests["v4-launch"], launches, "nothing launched");
  await w.restart({ PUBLIC_URL: "http://worker.example.com" });
  const health = await w.call("/health", { headers: { authorization: ADMIN.authorization } });
  assert.equal(health.status, 503);
  assert.deepEqual(health.body.problems.map((p) => p.setting), ["PUBLIC_URL"]);
  assert.ok(!JSON.stringify(health.body).includes("worker.example.com"), "the value is not shown");
  await w.restart({ PUBLIC_URL: w.origin }); // the tests after this one launch again
});
