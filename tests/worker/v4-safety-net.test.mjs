// Issue 34 point 4: the v4 safety net ends, whatever the v4 API answers. Against a hostile API
// (the simulator, its answers changed on the way by the test): a deliveries list that never shows
// the worker's replays, a delivery stuck PENDING, a list of 2,000 failed deliveries, 50 duplicate
// final callbacks. Each run ends (done, its lost batches named) within the bounds: at most 3
// replays per batch counted by the worker, at most SUBREQUEST_BUDGET requests per alarm, at most
// one round per V4_RECHECK_MS, no progress for V4_GIVE_UP_MS ends it. The counts are printed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { SECRETS } from "./worker-fixture.mjs";
import { advance as advanceClock, launchV4Seen, postCallback, startV4Worker } from "./v4-fixture.mjs";

const BUDGET = 25;
const RECHECK_MS = 100;
const GIVE_UP_MS = 5000;
let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startV4Worker({
    clock,
    settings: { V4_STATUS_INTERVAL_MS: "200", V4_RECHECK_MS: String(RECHECK_MS), V4_GIVE_UP_MS: String(GIVE_UP_MS), SUBREQUEST_BUDGET: String(BUDGET) },
  });
});
after(() => w.close());

const advance = (ms, step) => advanceClock(w, clock, ms, step);
const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** The run once the worker ended it (done: a finish_time), waited for at most `timeoutMs`. */
const untilEnded = (runUid, token, timeoutMs = 30000) =>
  w.untilRun(runUid, token, (run) => run.finish_time !== null, "the worker ended the run", { timeoutMs, everyMs: 100 });

/**
 * Answers the deliveries list of `runUid` with `list(query, simItems)` (the simulator's own
 * answer given), and its replays with `replayed(deliveryUid)` when set; the rest goes on.
 */
function hostile(runUid, { list, replayed }) {
  w.hooks.intercept = async (request) => {
    const url = new URL(request.url);
    if (url.pathname.endsWith("/v4/runs/callbacks") && url.searchParams.get("run_uid") === runUid) {
      const simAnswer = await w.sim.handle(new Request(request.url, { headers: request.headers }));
      return json(list(url.searchParams, await simAnswer.json()));
    }
    const replay = /\/v4\/runs\/callbacks\/([^/]+)\/replay$/.exec(url.pathname);
    if (replay && replayed) return replayed(decodeURIComponent(replay[1]));
    return undefined;
  };
}

/** What the worker sent for a run: listings (first pages), replay requests per batch, requests per alarm. */
function counts(runUid, batchOf) {
  const mine = w.outbound.filter((r) => r.step?.startsWith(`${runUid}:v4-`));
  const listings = mine.filter((r) => r.url.includes("/v4/runs/callbacks?") && r.url.includes("offset=0")).length;
  const replaysPerBatch = new Map();
  for (const r of mine) {
    const m = /\/v4\/runs\/callbacks\/([^/?]+)\/replay/.exec(r.url);
    if (!m) continue;
    const batch = batchOf(decodeURIComponent(m[1]));
    replaysPerBatch.set(batch, (replaysPerBatch.get(batch) ?? 0) + 1);
  }
  const perAlarm = w.requestsPerStep(runUid);
  return {
    alarms: perAlarm.length,
    listings,
    replays: [...replaysPerBatch.values()].reduce((a, b) => a + b, 0),
    maxReplaysPerBatch: Math.max(0, ...replaysPerBatch.values()),
    maxRequestsPerAlarm: Math.max(0, ...perAlarm),
  };
}

/** The sim's delivery uid → batch_uid of a run. */
const simBatchOf = (runUid) => {
  const map = new Map(w.sim.v4.deliveries(runUid).map((d) => [d.uid, d.batch_uid]));
  return (uid) => map.get(uid);
};

function report(name, figures) {
  console.log(`v4 safety net, ${name}: ${JSON.stringify(figures)}`);
}

test("a deliveries list that never shows the worker's replays: 3 replays per batch, then the run ends naming them", async () => {
  w.sim.v4.setDefaults({ rows: 20, pageSize: 10, durationMs: 2000, faults: { lostRate: 1, replayLostRate: 1 } });
  const run = await launchV4Seen(w, { inputs: [{}] });
  hostile(run.runUid, { list: (_q, items) => items.filter((d) => d.parent_uid === null) });
  const t0 = Date.now();
  await advance(2000);
  const ended = await untilEnded(run.runUid, run.token);
  const figures = { ...counts(run.runUid, simBatchOf(run.runUid)), ms: Date.now() - t0 };
  w.hooks.intercept = undefined;
  report("list without replays", figures);
  const batches = w.sim.v4.run(run.runUid).batches.map((b) => b.batchUid);
  assert.equal(figures.maxReplaysPerBatch, 3, "3 replays per batch, counted by the worker");
  assert.equal(figures.replays, 3 * batches.length);
  assert.ok(figures.maxRequestsPerAlarm <= BUDGET, `${figures.maxRequestsPerAlarm} requests in one alarm`);
  assert.ok(figures.listings <= figures.alarms, "one listing per round at most");
  for (const b of batches) assert.ok(ended.error_message.includes(b), `${b} named`);
  assert.match(ended.error_message, /3 batches could not be recovered after 3 replays each/);
  assert.deepEqual([ended.status, ended.error_code, ended.rows_missing.batch_count], ["shutdown", "ROWS_MISSING", 3]);
  w.sim.v4.setDefaults({});
});

test("a delivery stuck PENDING forever: the run ends V4_GIVE_UP_MS after its end was known, the batch named", async () => {
  w.sim.v4.setDefaults({ rows: 20, pageSize: 10, durationMs: 2000, faults: { lostRate: 1, replayLostRate: 1 } });
  const run = await launchV4Seen(w, { inputs: [{}] });
  let stuck = null;
  hostile(run.runUid, {
    list: (_q, items) =>
      items.map((d) => {
        stuck ??= d.batch_uid;
        return d.batch_uid === stuck ? { ...d, status: "PENDING" } : d;
      }),
  });
  await advance(2000);
  const t0 = Date.now();
  const ended = await untilEnded(run.runUid, run.token, GIVE_UP_MS + 20000);
  const figures = { ...counts(run.runUid, simBatchOf(run.runUid)), msAfterTheEnd: Date.now() - t0 };
  w.hooks.intercept = undefined;
  report("delivery stuck PENDING", figures);
  assert.ok(figures.maxReplaysPerBatch <= 3);
  assert.ok(figures.maxRequestsPerAlarm <= BUDGET, `${figures.maxRequestsPerAlarm} requests in one alarm`);
  // One listing per round, one round per V4_RECHECK_MS at most, for V4_GIVE_UP_MS (and the first rounds).
  assert.ok(figures.listings <= GIVE_UP_MS / RECHECK_MS + 5, `${figures.listings} listings`);
  assert.match(ended.error_message, /gave up after 5000 ms without progress \(V4_GIVE_UP_MS\)/);
  assert.ok(ended.error_message.includes(stuck), "the stuck batch is named");
  w.sim.v4.setDefaults({});
});

test("a list of 2,000 failed deliveries: at most 3 replays each and SUBREQUEST_BUDGET per alarm; the run ends naming them", async () => {
  w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 1000, faults: { lostRate: 1 } });
  const run = await launchV4Seen(w, { inputs: [{}] });
  const failed = Array.from({ length: 2000 }, (_, i) => ({
    uid: `hostile-d-${i}`,
    parent_uid: null,
    status: "FAILED",
    http_status: 502,
    batch_uid: `hostile-b-${i}`,
    run_uid: run.runUid,
  }));
  // Every other replay request fails (500): those are counted too.
  hostile(run.runUid, {
    list: (q) => failed.slice(Number(q.get("offset")), Number(q.get("offset")) + Number(q.get("limit"))),
    replayed: (uid) => (Number(uid.split("-").at(-1)) % 2 === 0 ? json({ message: "no" }, 500) : json({ uid: `${uid}-r`, parent_uid: uid, status: "PENDING" })),
  });
  await advance(1000);
  const ended = await untilEnded(run.runUid, run.token, GIVE_UP_MS + 30000);
  const figures = counts(run.runUid, (uid) => uid.replace("-d-", "-b-"));
  w.hooks.intercept = undefined;
  report("2,000 failed deliveries", figures);
  assert.ok(figures.maxReplaysPerBatch <= 3, `${figures.maxReplaysPerBatch} replays of one batch`);
  assert.ok(figures.maxRequestsPerAlarm <= BUDGET, `${figures.maxRequestsPerAlarm} requests in one alarm`);
  assert.ok(figures.listings <= figures.alarms);
  assert.match(ended.error_message, /The rows of 2000 batches .*\(batch_uid hostile-b-0, hostile-b-1, hostile-b-2, hostile-b-3, hostile-b-4 and 1995 more\)/);
  assert.deepEqual([ended.status, ended.error_code], ["shutdown", "ROWS_MISSING"]);
  assert.deepEqual(ended.rows_missing.batches, failed.slice(0, 100).map((d) => d.batch_uid), "100 listed at most");
  assert.equal(ended.rows_missing.batch_count, 2000);
  w.sim.v4.setDefaults({});
});

test("a deliveries list that always fails (500): the run ends at V4_GIVE_UP_MS, ROWS_MISSING with no batch it could name", async () => {
  w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 1000, faults: { lostRate: 1 } });
  const run = await launchV4Seen(w, { inputs: [{}] });
  w.hooks.intercept = async (request) => {
    const url = new URL(request.url);
    if (url.pathname.endsWith("/v4/runs/callbacks") && url.searchParams.get("run_uid") === run.runUid) return json({ message: "down" }, 500);
    return undefined;
  };
  await advance(1000);
  const ended = await untilEnded(run.runUid, run.token, GIVE_UP_MS + 20000);
  const figures = counts(run.runUid, () => "none");
  w.hooks.intercept = undefined;
  report("list always 500", figures);
  assert.deepEqual([ended.status, ended.error_code, ended.rows_missing.batch_count], ["shutdown", "ROWS_MISSING", 0]);
  assert.match(ended.error_message, /gave up after 5000 ms without progress \(V4_GIVE_UP_MS\): its deliveries could not be checked/);
  assert.ok(figures.listings <= GIVE_UP_MS / RECHECK_MS + 5, `${figures.listings} listings`);
  w.sim.v4.setDefaults({});
});

test("50 duplicate final callbacks: at most one round per V4_RECHECK_MS, and the run still ends", async () => {
  const recheck = 1000;
  const giveUp = 4000;
  await w.restart({ V4_RECHECK_MS: String(recheck), V4_GIVE_UP_MS: String(giveUp) });
  w.sim.v4.setDefaults({ rows: 10, pageSize: 10, durationMs: 600_000 });
  const run = await launchV4Seen(w, { inputs: [{}] });
  // One delivery in flight for ever: the run cannot end before its give-up time.
  hostile(run.runUid, { list: () => [{ uid: "stuck-d", parent_uid: null, status: "PENDING", batch_uid: "stuck-b", run_uid: run.runUid }] });
  const final = { run: { run_uid: run.runUid, batch_uid: "final-b", status: "SUCCEEDED" }, results: [] };
  const t0 = Date.now();
  const answers = [];
  for (let i = 0; i < 50; i++) answers.push((await postCallback(w, final, { "x-callback-secret": run.secret })).body.state);
  const postedMs = Date.now() - t0;
  const ended = await untilEnded(run.runUid, run.token, giveUp + 20000);
  const elapsed = Date.now() - t0;
  const figures = { ...counts(run.runUid, () => "stuck-b"), postedMs, elapsedMs: elapsed };
  w.hooks.intercept = undefined;
  report("50 duplicate finals", figures);
  assert.deepEqual([answers[0], new Set(answers.slice(1)).size, answers[1]], ["stored", 1, "duplicate"]);
  assert.ok(figures.listings <= Math.floor(elapsed / recheck) + 1, `${figures.listings} listings in ${elapsed} ms`);
  assert.ok(figures.maxRequestsPerAlarm <= BUDGET);
  assert.match(ended.error_message, /gave up after 4000 ms without progress/);
  assert.ok(ended.error_message.includes("stuck-b"));
  w.sim.v4.setDefaults({});
});

test("V4_GIVE_UP_MS is validated like the other settings and listed by /health when wrong", async () => {
  const { v4Problems, v4Settings } = await import("../../worker/src/v4-settings.js");
  const env = { CAPTAINDATA_API_KEY: "k" };
  assert.equal(v4Settings(env).giveUpMs, 3_600_000, "one hour by default");
  assert.equal(v4Settings({ ...env, V4_GIVE_UP_MS: "90000" }).giveUpMs, 90000);
  for (const wrong of ["0", "-5", "soon", "1.5"]) {
    assert.throws(() => v4Settings({ ...env, V4_GIVE_UP_MS: wrong }), { setting: "V4_GIVE_UP_MS" }, wrong);
    assert.deepEqual(v4Problems({ V4_GIVE_UP_MS: wrong }).map((p) => p.setting), ["V4_GIVE_UP_MS"]);
  }
  await w.restart({ V4_GIVE_UP_MS: "never" });
  const health = await w.call("/health", { headers: { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` } });
  assert.equal(health.status, 503);
  assert.deepEqual(health.body.problems.map((p) => p.setting), ["V4_GIVE_UP_MS"]);
});
