// The simulator's Captain Data v4 async API over real HTTP on 127.0.0.1, asserted from what a
// callback receiver sees (bodies, headers, order) and what the runs and deliveries endpoints say.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { createSim, manualClock } from "../sim/index.js";
import { startSimServer } from "../sim/server.mjs";

const KEY = { "x-api-key": "sim-key" };
const SECRET = { "x-callback-secret": "cb-s3cret" };

/** A callback receiver on 127.0.0.1: records every POST; `answer(body)` picks the HTTP status (200). */
async function startReceiver() {
  const received = [];
  const receiver = { received, answer: () => 200 };
  const server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text);
      received.push({ headers: req.headers, body, path: req.url });
      res.writeHead(receiver.answer(body)).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${server.address().port}/callbacks`;
  receiver.close = () => new Promise((resolve) => server.close(resolve));
  receiver.batches = (runUid) => received.filter((r) => r.body.run.run_uid === runUid).map((r) => r.body);
  return receiver;
}

async function v4(server, path, init = {}) {
  const res = await fetch(`${server.origin}/v4${path}`, { ...init, headers: { ...KEY, ...init.headers } });
  return { status: res.status, body: await res.json() };
}

function launch(server, body, headers = {}) {
  return v4(server, "/actions/linkedin-extract-people/async", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

const ids = (batches) => batches.flatMap((b) => b.results ?? []).map((r) => r.id);
const range = (n, from = 0) => Array.from({ length: n }, (_, i) => `row-${from + i}`);

describe("v4 async over HTTP", () => {
  const clock = manualClock(Date.UTC(2025, 5, 1));
  let server;
  let receiver;
  /** Moves simulated time on and waits until every callback then due has been answered. */
  async function advance(ms) {
    clock.advance(ms);
    server.sim.tick();
    await server.sim.v4.settled();
  }
  before(async () => {
    receiver = await startReceiver();
    server = await startSimServer({ clock, seed: 4, v4Defaults: { rows: 25, pageSize: 10, durationMs: 3000 } });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test("launch: X-API-Key, inputs (1 to 100,000), an https callback (http on loopback only), its headers", async () => {
    const callback = { url: receiver.url, headers: SECRET };
    const good = { inputs: [{ linkedin_profile_url: "https://www.linkedin.com/in/a" }], callback };
    assert.equal((await launch(server, good, { "x-api-key": "wrong" })).status, 401);
    const unauth = await fetch(`${server.origin}/v4/actions/x/async`, { method: "POST", body: JSON.stringify(good) });
    const body = await unauth.json();
    assert.deepEqual([unauth.status, body.error_label, body.error_scope], [401, "UNAUTHORIZED", "auth"]);
    assert.deepEqual(Object.keys(body), ["error_label", "error_scope", "error_ref", "message", "status_code", "params"]);
    const refused = [
      [{ callback }, /inputs/],
      [{ inputs: [], callback }, /inputs/],
      [{ inputs: Array.from({ length: 100_001 }, () => ({})), callback }, /at most 100,000/],
      [{ inputs: [{}] }, /callback/],
      [{ inputs: [{}], callback: { url: "http://example.com/cb" } }, /HTTPS/],
      [{ inputs: [{}], callback: { url: "not a url" } }, /absolute URL/],
      [{ inputs: [{}], callback: { url: receiver.url, headers: { n: 1 } } }, /headers/],
    ];
    for (const [bad, message] of refused) {
      const res = await launch(server, bad);
      assert.equal(res.status, 400, JSON.stringify(bad).slice(0, 80));
      assert.match(res.body.message, message);
    }
    const biggest = await launch(server, { ...good, inputs: Array.from({ length: 100_000 }, () => ({})) });
    assert.equal(biggest.status, 201);
    const res = await launch(server, { ...good, callback: { url: receiver.url, headers: [{ name: "x-callback-secret", value: "array-form" }] } });
    assert.equal(res.status, 201);
    assert.equal(res.body.status, "CREATED");
    assert.match(res.body.run_uid, /^[0-9a-f-]{36}$/);
    assert.equal((await v4(server, "/actions/x/async")).status, 405);
    assert.equal((await v4(server, "/nothing")).status, 404);
    assert.equal((await v4(server, "/runs/no-such-run")).status, 404);
    await advance(3000);
    const sent = receiver.batches(res.body.run_uid);
    assert.ok(sent.length > 0);
    assert.ok(receiver.received.filter((r) => r.body.run.run_uid === res.body.run_uid).every((r) => r.headers["x-callback-secret"] === "array-form"));
  });

  test("callbacks: one RUNNING per page with the launch's headers, then the final SUCCEEDED; the run's status follows", async () => {
    server.sim.v4.setDefaults({ rows: 25, pageSize: 10, durationMs: 3000, startDelayMs: 500, blockedMs: 500 });
    const inputs = [{ url: "a" }, { url: "b" }];
    const { body } = await launch(server, { inputs, custom_data: { crm_id: 42 }, callback: { url: receiver.url, headers: SECRET } });
    const uid = body.run_uid;
    const status = async () => (await v4(server, `/runs/${uid}`)).body.status;
    assert.equal(await status(), "QUEUED");
    await advance(500);
    assert.equal(await status(), "BLOCKED");
    await advance(500);
    assert.equal(await status(), "RUNNING");
    assert.equal(receiver.batches(uid).length, 0);
    await advance(1000); // a third of the run: the first page
    assert.deepEqual(receiver.batches(uid).map((b) => [b.run.status, b.results.length]), [["RUNNING", 10]]);
    await advance(2000);
    const batches = receiver.batches(uid);
    assert.deepEqual(batches.map((b) => b.run.status), ["RUNNING", "RUNNING", "RUNNING", "SUCCEEDED"]);
    assert.deepEqual(ids(batches), range(25), "every row once, in order");
    assert.equal(new Set(batches.map((b) => b.run.batch_uid)).size, 4, "a batch_uid per callback");
    assert.deepEqual(batches.map((b) => b.input), [inputs[0], inputs[1], inputs[0], null]);
    assert.ok(batches.every((b) => b.custom_data.crm_id === 42 && Object.keys(b).join() === "run,input,custom_data,error,results"));
    assert.ok(batches.every((b) => b.error === null));
    assert.ok(receiver.received.filter((r) => r.body.run.run_uid === uid).every((r) => r.headers["x-callback-secret"] === "cb-s3cret"));
    const run = (await v4(server, `/runs/${uid}`)).body;
    assert.deepEqual([run.status, run.execution_mode, run.inputs_count, run.error], ["SUCCEEDED", "ASYNC", 2, null]);
    assert.ok(Date.parse(run.finished_at) > Date.parse(run.started_at));
    server.sim.v4.setDefaults({});
  });

  test("outcomes: PARTIAL_SUCCEEDED and FAILED say why in `error`; INVALID has no rows; the last page can come with the final", async () => {
    const start = (spec) => server.sim.v4.launch({ callback: { url: receiver.url }, spec }).runUid;
    const partial = start({ rows: 10, pageSize: 5, durationMs: 1000, outcome: "PARTIAL_SUCCEEDED" });
    const failed = start({ rows: 5, pageSize: 5, durationMs: 1000, outcome: "FAILED" });
    const invalid = start({ rows: 5, outcome: "INVALID" });
    const inFinal = start({ rows: 12, pageSize: 5, durationMs: 1000, rowsInFinal: true });
    await advance(1000);
    const last = (uid) => receiver.batches(uid).at(-1);
    assert.deepEqual([last(partial).run.status, last(partial).error.error_label], ["PARTIAL_SUCCEEDED", "PARTIAL_FAILURE"]);
    assert.deepEqual(ids(receiver.batches(partial)), range(10));
    assert.deepEqual([last(failed).run.status, last(failed).error.error_label], ["FAILED", "RUN_FAILED"]);
    assert.deepEqual(receiver.batches(invalid).map((b) => [b.run.status, b.results]), [["INVALID", null]]);
    assert.equal((await v4(server, `/runs/${invalid}`)).body.status, "INVALID");
    assert.deepEqual(receiver.batches(inFinal).map((b) => [b.run.status, b.results.length]), [["RUNNING", 5], ["RUNNING", 5], ["SUCCEEDED", 2]]);
  });

  test("stop(): the rows so far stay, the rest never comes, the final callback says STOPPED", async () => {
    const uid = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { rows: 40, pageSize: 10, durationMs: 4000 } }).runUid;
    await advance(2000);
    assert.equal(server.sim.v4.stop(uid).status, "STOPPED");
    await server.sim.v4.settled();
    await advance(5000);
    assert.deepEqual(receiver.batches(uid).map((b) => b.run.status), ["RUNNING", "RUNNING", "STOPPED"]);
    assert.deepEqual(ids(receiver.batches(uid)), range(20));
    assert.equal((await v4(server, `/runs/${uid}`)).body.status, "STOPPED");
    assert.equal(server.sim.v4.deliveries(uid).length, 3);
  });

  test("deliveries: listed by run and status, paged, sorted; one by uid; bad parameters are 400", async () => {
    const uid = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { rows: 30, pageSize: 10, durationMs: 3000 } }).runUid;
    assert.deepEqual((await v4(server, `/runs/callbacks?run_uid=${uid}`)).body, [], "nothing produced yet");
    await advance(3000);
    const all = (await v4(server, `/runs/callbacks?run_uid=${uid}&limit=100`)).body;
    assert.equal(all.length, 4);
    const keys = "uid,parent_uid,retry_count,created_at,updated_at,status,callback_url,http_status,batch_uid,run_uid,workspace_uid";
    assert.ok(all.every((d) => Object.keys(d).join() === keys && d.status === "SUCCESS" && d.http_status === 200 && d.parent_uid === null));
    assert.deepEqual(all.map((d) => d.batch_uid), receiver.batches(uid).map((b) => b.run.batch_uid));
    const page = (await v4(server, `/runs/callbacks?run_uid=${uid}&limit=2&offset=1`)).body;
    assert.deepEqual(page.map((d) => d.uid), all.slice(1, 3).map((d) => d.uid));
    const newest = (await v4(server, `/runs/callbacks?run_uid=${uid}&sort=-created_at&limit=1`)).body;
    assert.equal(newest[0].uid, all.at(-1).uid);
    assert.equal((await v4(server, `/runs/callbacks?run_uid=${uid}&status=FAILED`)).body.length, 0);
    assert.equal((await v4(server, `/runs/callbacks?limit=5`)).body.length, 5, "every run's, 10 by default, here 5");
    assert.deepEqual((await v4(server, `/runs/callbacks/${all[0].uid}`)).body, all[0]);
    assert.equal((await v4(server, "/runs/callbacks/nope")).status, 404);
    for (const bad of ["status=DONE", "limit=0", "limit=101", "offset=-1", "sort=uid"]) {
      assert.equal((await v4(server, `/runs/callbacks?${bad}`)).status, 400, bad);
    }
  });

  test("replay: a new delivery of the same batch (parent_uid, retry_count), at most 3, of the original only", async () => {
    const uid = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { rows: 10, pageSize: 10, durationMs: 1000 } }).runUid;
    await advance(1000);
    const [first] = server.sim.v4.deliveries(uid);
    const replays = [];
    for (let i = 1; i <= 3; i++) {
      const res = await v4(server, `/runs/callbacks/${first.uid}/replay`, { method: "POST" });
      assert.equal(res.status, 200);
      replays.push(res.body);
      await server.sim.v4.settled();
    }
    assert.deepEqual(replays.map((r) => [r.parent_uid, r.retry_count, r.batch_uid]), [1, 2, 3].map((n) => [first.uid, n, first.batch_uid]));
    const fourth = await v4(server, `/runs/callbacks/${first.uid}/replay`, { method: "POST" });
    assert.deepEqual([fourth.status, fourth.body.error_label], [400, "REPLAY_LIMIT_REACHED"]);
    const ofReplay = await v4(server, `/runs/callbacks/${replays[0].uid}/replay`, { method: "POST" });
    assert.equal(ofReplay.status, 400);
    assert.match(ofReplay.body.message, /original/);
    // The receiver got the same batch 4 times: the same batch_uid, the same rows.
    const same = receiver.batches(uid).filter((b) => b.run.batch_uid === first.batch_uid);
    assert.equal(same.length, 4);
    assert.ok(same.every((b) => JSON.stringify(b) === JSON.stringify(same[0])));
    const listed = server.sim.v4.deliveries(uid).filter((d) => d.batch_uid === first.batch_uid);
    assert.deepEqual(listed.map((d) => [d.retry_count, d.status]), [[0, "SUCCESS"], [1, "SUCCESS"], [2, "SUCCESS"], [3, "SUCCESS"]]);
  });

  test("a receiver that answers 500: the delivery is FAILED with its status; a replay once it is back delivers", async () => {
    receiver.answer = () => 500;
    const uid = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { rows: 5, pageSize: 5, durationMs: 1000 } }).runUid;
    await advance(1000);
    receiver.answer = () => 200;
    const failed = server.sim.v4.deliveries(uid);
    assert.deepEqual(failed.map((d) => [d.status, d.http_status]), [["FAILED", 500], ["FAILED", 500]]);
    const listed = (await v4(server, `/runs/callbacks?run_uid=${uid}&status=FAILED`)).body;
    assert.equal(listed.length, 2);
    await v4(server, `/runs/callbacks/${failed[0].uid}/replay`, { method: "POST" });
    await server.sim.v4.settled();
    assert.deepEqual(server.sim.v4.deliveries(uid).at(-1).status, "SUCCESS");
  });

  test("API faults of a run (the v3 fault plan): a scripted 503 on its status read", async () => {
    const uid = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { apiFaults: { script: [{ kind: "run", nth: 1, respond: 503 }] } } }).runUid;
    const first = await v4(server, `/runs/${uid}`);
    assert.deepEqual([first.status, first.body.error_label], [503, "SERVICE_UNAVAILABLE"]);
    assert.equal((await v4(server, `/runs/${uid}`)).status, 200);
  });

  test("control routes over HTTP, without auth: a run, its stop, its deliveries and the POSTs made", async () => {
    const uid = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { rows: 20, pageSize: 10, durationMs: 2000 } }).runUid;
    await advance(1000);
    const control = async (path, init) => (await fetch(`${server.origin}/__sim/v4${path}`, init)).json();
    assert.deepEqual([(await control(`/runs/${uid}`)).status, (await control(`/runs/${uid}`)).rows], ["RUNNING", 20]);
    assert.equal((await control(`/deliveries?run=${uid}`)).length, 1);
    assert.equal((await control(`/callbacks?run=${uid}`)).length, 1);
    assert.equal((await control(`/runs/${uid}/stop`, { method: "POST" })).status, "STOPPED");
    assert.equal((await fetch(`${server.origin}/__sim/v4/runs/nope`)).status, 404);
    await server.sim.v4.settled();
  });

  test("requests are counted per v4 kind; the API key is in no URL", async () => {
    server.sim.reset();
    const { body } = await launch(server, { inputs: [{}], callback: { url: receiver.url } });
    await v4(server, `/runs/${body.run_uid}`);
    await v4(server, `/runs/callbacks?run_uid=${body.run_uid}`);
    const { requests } = server.sim.stats(body.run_uid);
    assert.deepEqual([requests["v4-launch"], requests["v4-run"], requests.total], [1, 1, 2]);
    assert.equal(server.sim.stats().requests["v4-callbacks"], 1);
  });
});

describe("v4 callback faults", () => {
  const clock = manualClock(Date.UTC(2025, 5, 1));
  let sim;
  let receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  /** A simulator on the manual clock, one run with `spec`, played to its end. */
  async function play(spec, { seed = 9, beforeEnd } = {}) {
    sim = createSim({ clock, seed });
    receiver.received.length = 0; // a new simulator with the same seed gives the same run uids
    const { runUid } = sim.v4.launch({ callback: { url: receiver.url }, spec: { durationMs: 1000, ...spec } });
    await beforeEnd?.(runUid);
    for (let t = 0; t < (spec.durationMs ?? 1000) + (spec.faults?.delayMs ?? 0); t += 100) {
      clock.advance(100);
      sim.tick();
      await sim.v4.settled();
    }
    return runUid;
  }

  test("lost callbacks: never sent, the delivery FAILED with a gateway status; the others arrive", async () => {
    const uid = await play({ rows: 100, pageSize: 10, faults: { lostRate: 0.3 } });
    const deliveries = sim.v4.deliveries(uid);
    const lost = deliveries.filter((d) => d.status === "FAILED");
    assert.ok(lost.length >= 1 && lost.length <= 8, `${lost.length} lost`);
    assert.ok(lost.every((d) => d.http_status === 502));
    const got = receiver.batches(uid).map((b) => b.run.batch_uid);
    assert.deepEqual(got, deliveries.filter((d) => d.status === "SUCCESS").map((d) => d.batch_uid));
  });

  test("the final callback lost: every page arrives, the end never does; the run's status says SUCCEEDED", async () => {
    const uid = await play({ rows: 30, pageSize: 10, faults: { finalLost: true } });
    assert.deepEqual(receiver.batches(uid).map((b) => b.run.status), ["RUNNING", "RUNNING", "RUNNING"]);
    assert.equal(sim.v4.run(uid).status, "SUCCEEDED");
    assert.deepEqual(sim.v4.deliveries(uid).map((d) => d.status), ["SUCCESS", "SUCCESS", "SUCCESS", "FAILED"]);
  });

  test("duplicated: the same batch twice (one delivery); reordered: a batch after the next one; delayed: later, PENDING meanwhile", async () => {
    const dup = await play({ rows: 30, pageSize: 10, faults: { duplicateRate: 1 } });
    const ids = receiver.batches(dup).map((b) => b.run.batch_uid);
    assert.equal(ids.length, 8);
    assert.ok([...new Set(ids)].every((id) => ids.filter((x) => x === id).length === 2), "each batch twice");
    assert.equal(sim.v4.deliveries(dup).length, 4);

    const reordered = await play({ rows: 40, pageSize: 10, faults: { reorderRate: 1 } }, { seed: 10 });
    const order = receiver.batches(reordered).map((b) => b.results?.[0]?.index ?? "final");
    assert.notDeepEqual(order, [0, 10, 20, 30, "final"]);
    assert.deepEqual([...order].sort((a, b) => (a === "final") - (b === "final") || a - b), [0, 10, 20, 30, "final"]);

    const delayed = await play(
      { rows: 10, pageSize: 10, faults: { delayRate: 1, delayMs: 5000 } },
      {
        beforeEnd: async (runUid) => {
          clock.advance(1000);
          sim.tick();
          await sim.v4.settled();
          const [page] = sim.v4.deliveries(runUid);
          assert.equal(page.status, "PENDING", "produced, not sent yet");
          assert.equal(receiver.batches(runUid).length, 0);
        },
      },
    );
    assert.deepEqual(sim.v4.deliveries(delayed).map((d) => d.status), ["SUCCESS", "SUCCESS"]);
  });

  test("unacknowledged: the receiver has the batch but the delivery says FAILED; its replay brings the same batch_uid again", async () => {
    const uid = await play({ rows: 10, pageSize: 10, faults: { unacknowledgedRate: 1 } });
    const [page] = sim.v4.deliveries(uid);
    assert.deepEqual([page.status, page.http_status], ["FAILED", null]);
    assert.equal(receiver.batches(uid).filter((b) => b.run.batch_uid === page.batch_uid).length, 1, "received all the same");
    const replayed = await sim.handle(new Request(`http://sim/v4/runs/callbacks/${page.uid}/replay`, { method: "POST", headers: KEY }));
    assert.equal(replayed.status, 200);
    await sim.v4.settled();
    assert.equal(receiver.batches(uid).filter((b) => b.run.batch_uid === page.batch_uid).length, 2);
  });

  test("the receiver down for a simulated minute: deliveries meanwhile FAILED 503 and nothing sent; replays after it deliver", async () => {
    const uid = await play(
      { rows: 50, pageSize: 10, durationMs: 50_000 },
      { beforeEnd: () => sim.v4.receiverDown(60_000) },
    );
    assert.equal(receiver.batches(uid).length, 0);
    const failed = sim.v4.deliveries(uid);
    assert.deepEqual(new Set(failed.map((d) => `${d.status} ${d.http_status}`)), new Set(["FAILED 503"]));
    clock.advance(10_000); // the minute is over
    for (const d of failed) {
      const res = await sim.handle(new Request(`http://sim/v4/runs/callbacks/${d.uid}/replay`, { method: "POST", headers: KEY }));
      assert.equal(res.status, 200);
    }
    await sim.v4.settled();
    assert.deepEqual(ids(receiver.batches(uid)), range(50));
  });

  test("the callback dice are seeded: same seed, same faults; another seed, others", async () => {
    const faults = { lostRate: 0.2, duplicateRate: 0.2, reorderRate: 0.2 };
    const outcome = async (seed) => {
      const uid = await play({ rows: 200, pageSize: 10, faults }, { seed });
      return sim.v4.callbacks(uid).map((c) => `${c.duplicate}`).join() + sim.v4.deliveries(uid).map((d) => d.status).join();
    };
    const a = await outcome(21);
    assert.equal(a, await outcome(21));
    assert.notEqual(a, await outcome(22));
  });

  test("a bad v4 spec or fault plan is refused, naming the field", () => {
    const s = createSim({ clock });
    const launch = (spec) => s.v4.launch({ callback: { url: receiver.url }, spec });
    assert.throws(() => launch({ faults: { lostRate: 2 } }), /faults\.lostRate/);
    assert.throws(() => launch({ faults: { lostRat: 0.1 } }), /Unknown v4 fault lostRat/);
    assert.throws(() => launch({ outcome: "DONE" }), /outcome/);
    assert.throws(() => launch({ pageSize: 0 }), /pageSize/);
    assert.throws(() => s.v4.launch({ callback: { url: "http://example.com/x" } }), /HTTPS/);
  });
});

test("with the wall clock, timers send the callbacks when due", async () => {
  const receiver = await startReceiver();
  const server = await startSimServer({ seed: 5 });
  try {
    const { runUid } = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { rows: 20, pageSize: 10, durationMs: 200 } });
    await server.sim.until(() => receiver.batches(runUid).some((b) => b.run.status === "SUCCEEDED"), { what: "the final callback" });
    assert.deepEqual(ids(receiver.batches(runUid)), range(20));
  } finally {
    await server.close();
    await receiver.close();
  }
});
