// The simulator over real HTTP on 127.0.0.1: what every other suite, the demo and the bench rely on.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { REPLAY_HEADER, createSim, manualClock } from "../sim/index.js";
import { startSimServer } from "../sim/server.mjs";

const AUTH = { authorization: "x-api-key sim-key", "x-project-id": "sim-project" };

/** GET (or other method) against the simulator with the right credentials. */
function call(server, path, init = {}) {
  return fetch(`${server.url}${path}`, { ...init, headers: { ...AUTH, ...init.headers } });
}

async function getJson(server, path, init) {
  const res = await call(server, path, init);
  return { status: res.status, headers: res.headers, body: await res.json() };
}

/** Reads every results page by following `paging.next` as given. */
async function readAllPages(server, jobUid) {
  const rows = [];
  let url = `${server.url}/jobs/${jobUid}/results`;
  while (url) {
    const res = await fetch(url, { headers: AUTH });
    const body = await res.json();
    rows.push(...body.results);
    url = body.paging.next;
  }
  return rows;
}

function control(server, path, body) {
  return fetch(
    `${server.origin}/__sim${path}`,
    body === undefined ? {} : { method: "POST", body: JSON.stringify(body) },
  );
}

describe("simulator over HTTP", () => {
  const clock = manualClock(Date.UTC(2025, 0, 1));
  let server;
  before(async () => {
    server = await startSimServer({ clock, seed: 7 });
  });
  after(() => server.close());

  test("binds loopback and refuses other hosts", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v3$/);
    await assert.rejects(startSimServer({ host: "0.0.0.0" }), TypeError);
  });

  test("authentication: missing or wrong key is 401, wrong project is 403", async () => {
    const { jobUid } = server.sim.createJob({ rows: 10 });
    assert.equal((await fetch(`${server.url}/jobs/${jobUid}`)).status, 401);
    const wrongKey = await getJson(server, `/jobs/${jobUid}`, { headers: { authorization: "x-api-key nope" } });
    assert.deepEqual([wrongKey.status, wrongKey.body], [401, { message: "Unauthorized" }]);
    const wrongProject = await call(server, `/jobs/${jobUid}`, { headers: { "x-project-id": "other" } });
    assert.equal(wrongProject.status, 403);
    assert.equal((await call(server, `/jobs/${jobUid}`)).status, 200);
  });

  test("unknown job is 404, unknown route 404, wrong method 405", async () => {
    assert.equal((await call(server, "/jobs/no-such-job")).status, 404);
    assert.equal((await call(server, "/jobs/no-such-job/results")).status, 404);
    assert.equal((await call(server, "/jobs/a%2F..%2Fb")).status, 404);
    assert.equal((await call(server, "/nothing/here")).status, 404);
    assert.equal((await fetch(`${server.origin}/v2/jobs/x`, { headers: AUTH })).status, 404);
    const { jobUid } = server.sim.createJob({ rows: 1 });
    assert.equal((await call(server, `/jobs/${jobUid}`, { method: "POST" })).status, 405);
  });

  test("results grow over the run; pages are fixed slices linked by absolute next URLs", async () => {
    const { jobUid } = server.sim.createJob({ rows: 250, durationMs: 10000, pageSize: 100 });
    let page = await getJson(server, `/jobs/${jobUid}/results`);
    assert.deepEqual(page.body, { results: [], paging: { have_next_page: false, next: null } });

    clock.advance(2000); // 20 % of the run: 50 rows, one partly filled page
    page = await getJson(server, `/jobs/${jobUid}/results`);
    assert.equal(page.body.results.length, 50);
    assert.equal(page.body.paging.have_next_page, false);

    clock.advance(4000); // 60 %: 150 rows, page 2 exists
    page = await getJson(server, `/jobs/${jobUid}/results`);
    assert.equal(page.body.results.length, 100);
    assert.deepEqual(page.body.paging, { have_next_page: true, next: `${server.url}/jobs/${jobUid}/results?page=2` });
    const page2 = await (await fetch(page.body.paging.next, { headers: AUTH })).json();
    assert.deepEqual(
      page2.results.map((r) => r.index),
      Array.from({ length: 50 }, (_, i) => 100 + i),
    );

    clock.advance(4000); // ended: every row
    const rows = await readAllPages(server, jobUid);
    assert.deepEqual(
      rows.map((r) => r.id),
      Array.from({ length: 250 }, (_, i) => `row-${i}`),
    );
  });

  test("rows are deterministic, realistic and about rowBytes long", async () => {
    const spec = { jobUid: "fixed-job", rows: 5, durationMs: 0, rowBytes: 300 };
    const a = createSim({ seed: 1, clock });
    const b = createSim({ seed: 99, clock });
    a.createJob(spec);
    b.createJob(spec);
    const read = async (sim) =>
      (await (await sim.handle(new Request("http://x/v3/jobs/fixed-job/results", { headers: AUTH }))).json()).results;
    const [ra, rb] = [await read(a), await read(b)];
    assert.deepEqual(ra, rb);
    for (const row of ra) {
      assert.match(row.linkedin_profile_url, /^https:\/\/www\.linkedin\.com\/in\//);
      assert.ok(row.full_name && row.company_name);
      const size = JSON.stringify(row).length;
      assert.ok(size >= 290 && size <= 310, `row size ${size}`);
    }
  });

  test("status lifecycle: pending → running → finished, with counts and times", async () => {
    const { jobUid } = server.sim.createJob({ rows: 100, durationMs: 1000, startDelayMs: 500, inputs: 7 });
    let run = (await getJson(server, `/jobs/${jobUid}`)).body;
    assert.equal(run.status, "pending");
    assert.equal(run.start_time, null);
    assert.equal(run.number_inputs, 7);
    clock.advance(1000);
    run = (await getJson(server, `/jobs/${jobUid}`)).body;
    assert.deepEqual([run.status, run.row_count, run.finish_time], ["running", 50, null]);
    assert.ok(run.start_time);
    clock.advance(500);
    run = (await getJson(server, `/jobs/${jobUid}`)).body;
    assert.deepEqual([run.status, run.row_count, run.total_row_count, run.error_message], ["finished", 100, 100, null]);
    assert.ok(Date.parse(run.finish_time) > Date.parse(run.start_time));
    for (const key of ["uid", "name", "workflow_uid"]) assert.equal(typeof run[key], "string");
  });

  test("start(): a pending job starts on command; its duration counts from then", async () => {
    const { jobUid } = server.sim.createJob({ rows: 100, durationMs: 1000, startDelayMs: 3_600_000 });
    clock.advance(5000);
    assert.equal((await getJson(server, `/jobs/${jobUid}`)).body.status, "pending");
    assert.equal(server.sim.start(jobUid).status, "running");
    clock.advance(500);
    assert.deepEqual(
      [(await getJson(server, `/jobs/${jobUid}`)).body.status, server.sim.job(jobUid).rowsAvailable],
      ["running", 50],
    );
    clock.advance(500);
    assert.equal((await getJson(server, `/jobs/${jobUid}`)).body.status, "finished");
    assert.equal(server.sim.start(jobUid).status, "finished", "no-op once started");
  });

  test("outcomes: warning, shutdown, stopped; finish() and stop() force an end", async () => {
    for (const outcome of ["warning", "shutdown", "stopped"]) {
      const { jobUid } = server.sim.createJob({ rows: 3, durationMs: 0, outcome });
      assert.equal((await getJson(server, `/jobs/${jobUid}`)).body.status, outcome);
    }
    const a = server.sim.createJob({ rows: 100, durationMs: 10000 });
    clock.advance(1000);
    server.sim.stop(a.jobUid);
    assert.deepEqual([server.sim.job(a.jobUid).status, server.sim.job(a.jobUid).rowsAvailable], ["stopped", 10]);
    const b = server.sim.createJob({ rows: 100, durationMs: 10000 });
    const finished = await (await control(server, `/jobs/${b.jobUid}/finish`, { status: "warning" })).json();
    assert.deepEqual([finished.status, finished.rowsAvailable], ["warning", 100]);
  });

  test("All Inputs Failed: shutdown with the message, results answer 400", async () => {
    const { jobUid } = server.sim.createJob({ rows: 50, durationMs: 0, outcome: "allInputsFailed" });
    const run = (await getJson(server, `/jobs/${jobUid}`)).body;
    assert.deepEqual([run.status, run.error_message, run.row_count], ["shutdown", "All Inputs Failed", 0]);
    const results = await getJson(server, `/jobs/${jobUid}/results`);
    assert.deepEqual([results.status, results.body], [400, { message: "All Inputs Failed" }]);
  });

  test("schedule: validates the body, creates a job with number_inputs", async () => {
    const body = { job_name: "My run", steps: [], inputs: [{ url: "a" }, { url: "b" }, { url: "c" }] };
    const res = await getJson(server, "/workflows/wf-1/schedule", {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.message, "Bot successfully scheduled.");
    assert.deepEqual(res.body.workflow, { uid: "wf-1" });
    const run = (await getJson(server, `/jobs/${res.body.job_uid}`)).body;
    assert.deepEqual([run.number_inputs, run.name, run.workflow_uid], [3, "My run", "wf-1"]);

    const missing = await getJson(server, "/workflows/wf-1/schedule", {
      method: "POST",
      body: JSON.stringify({ job_name: "x" }),
    });
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /inputs/);
    assert.equal((await call(server, "/workflows/wf-1/schedule", { method: "POST", body: "{nope" })).status, 400);
    assert.equal((await call(server, "/workflows/wf-1/schedule")).status, 405);
    assert.equal(
      (await fetch(`${server.url}/workflows/wf-1/schedule`, { method: "POST", body: JSON.stringify(body) })).status,
      401,
    );
  });

  test("CORS: preflight answered, Retry-After exposed", async () => {
    const res = await fetch(`${server.url}/jobs/x/results`, {
      method: "OPTIONS",
      headers: {
        origin: "http://127.0.0.1:5173",
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization, x-project-id",
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    assert.match(res.headers.get("access-control-allow-headers"), /authorization.*x-project-id.*content-type/);
    const control = await fetch(`${server.origin}/__sim/jobs`, {
      method: "OPTIONS",
      headers: {
        origin: "http://127.0.0.1:5173",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    assert.equal(control.status, 204);
    assert.match(control.headers.get("access-control-allow-methods"), /POST/);
    const get = await call(server, "/jobs/x");
    assert.equal(get.headers.get("access-control-allow-origin"), "*");
    assert.match(get.headers.get("access-control-expose-headers"), /retry-after/i);
  });

  test("control routes over HTTP need no auth: create, inspect, stats, reset", async () => {
    const created = await (await control(server, "/jobs", { rows: 30, durationMs: 0, pageSize: 10 })).json();
    assert.equal(created.status, "finished");
    const inspected = await (await fetch(`${server.origin}/__sim/jobs/${created.jobUid}`)).json();
    assert.equal(inspected.rowsAvailable, 30);
    await readAllPages(server, created.jobUid);
    const stats = await (await fetch(`${server.origin}/__sim/stats?job=${created.jobUid}`)).json();
    assert.equal(stats.requests.results, 3);
    assert.equal((await control(server, "/jobs", { rows: -1 })).status, 400);
  });
});

/** A results URL from any form of `paging.next` (URL, path, query string, page number). */
function resolveNext(server, jobUid, next) {
  const results = `${server.url}/jobs/${jobUid}/results`;
  if (typeof next === "number" || /^\d+$/.test(next)) return `${results}?page=${next}`;
  if (next.startsWith("?")) return `${results}${next}`;
  return new URL(next, server.origin).href;
}

describe("the API's open points", () => {
  const clock = manualClock(Date.UTC(2025, 0, 1));
  let server;
  before(async () => {
    server = await startSimServer({ clock, seed: 5 });
  });
  after(() => server.close());

  test("pages hold 1000 rows by default", async () => {
    const { jobUid } = server.sim.createJob({ rows: 2500, durationMs: 0 });
    const sizes = [];
    let url = `${server.url}/jobs/${jobUid}/results`;
    while (url) {
      const body = await (await fetch(url, { headers: AUTH })).json();
      sizes.push(body.results.length);
      url = body.paging.next;
    }
    assert.deepEqual(sizes, [1000, 1000, 500]);
  });

  for (const pageBase of [1, 0]) {
    for (const [nextForm, type] of [
      ["url", "string"],
      ["path", "string"],
      ["query", "string"],
      ["page", "number"],
      ["pageString", "string"],
    ]) {
      test(`paging.next as ${nextForm}, pages counted from ${pageBase}: every row once`, async () => {
        const { jobUid } = server.sim.createJob({ rows: 25, durationMs: 0, pageSize: 10, nextForm, pageBase });
        const first = (await getJson(server, `/jobs/${jobUid}/results`)).body;
        const next = first.paging.next;
        assert.equal(typeof next, type);
        const second = pageBase + 1;
        const expected = {
          url: `${server.url}/jobs/${jobUid}/results?page=${second}`,
          path: `/v3/jobs/${jobUid}/results?page=${second}`,
          query: `?page=${second}`,
          page: second,
          pageString: String(second),
        }[nextForm];
        assert.equal(next, expected);
        const rows = [...first.results];
        let link = next;
        while (link !== null) {
          const body = await (await fetch(resolveNext(server, jobUid, link), { headers: AUTH })).json();
          rows.push(...body.results);
          link = body.paging.next;
        }
        assert.deepEqual(
          rows.map((r) => r.index),
          Array.from({ length: 25 }, (_, i) => i),
        );
        // ?page=N is served the same way whatever form `next` takes.
        const byNumber = (await getJson(server, `/jobs/${jobUid}/results?page=${pageBase}`)).body;
        assert.deepEqual(byNumber, first);
        const below = await getJson(server, `/jobs/${jobUid}/results?page=${pageBase - 1}`);
        assert.equal(below.status, 400);
      });
    }
  }

  test("outcome completed; statuses in upper or title case on the wire", async () => {
    const completed = server.sim.createJob({ rows: 3, durationMs: 0, outcome: "completed" });
    assert.equal((await getJson(server, `/jobs/${completed.jobUid}`)).body.status, "completed");
    assert.equal(server.sim.job(completed.jobUid).status, "completed");
    const upper = server.sim.createJob({ rows: 10, durationMs: 1000, statusCase: "upper" });
    const title = server.sim.createJob({ rows: 10, durationMs: 1000, statusCase: "title", outcome: "warning" });
    assert.equal((await getJson(server, `/jobs/${upper.jobUid}`)).body.status, "RUNNING");
    assert.equal((await getJson(server, `/jobs/${title.jobUid}`)).body.status, "Running");
    clock.advance(1000);
    assert.equal((await getJson(server, `/jobs/${upper.jobUid}`)).body.status, "FINISHED");
    assert.equal((await getJson(server, `/jobs/${title.jobUid}`)).body.status, "Warning");
  });

  test("resultsWhilePending 404: results are 404 {message} while the run itself is 200 pending", async () => {
    const { jobUid } = server.sim.createJob({ rows: 10, durationMs: 1000, startDelayMs: 500, resultsWhilePending: 404 });
    const run = await getJson(server, `/jobs/${jobUid}`);
    assert.deepEqual([run.status, run.body.status], [200, "pending"]);
    const results = await getJson(server, `/jobs/${jobUid}/results`);
    assert.equal(results.status, 404);
    assert.deepEqual(Object.keys(results.body), ["message"]);
    clock.advance(500);
    assert.equal((await getJson(server, `/jobs/${jobUid}/results`)).status, 200);
  });

  test("countLagMs: row_count reports the rows of that long ago, also just after the end", async () => {
    const { jobUid } = server.sim.createJob({ rows: 100, durationMs: 1000, countLagMs: 300 });
    clock.advance(500);
    let run = (await getJson(server, `/jobs/${jobUid}`)).body;
    let readable = (await getJson(server, `/jobs/${jobUid}/results`)).body.results.length;
    assert.deepEqual([run.row_count, readable], [20, 50]);
    clock.advance(600); // ended 100 ms ago
    run = (await getJson(server, `/jobs/${jobUid}`)).body;
    readable = (await getJson(server, `/jobs/${jobUid}/results`)).body.results.length;
    assert.deepEqual([run.status, run.row_count, readable], ["finished", 80, 100]);
    clock.advance(200);
    assert.equal((await getJson(server, `/jobs/${jobUid}`)).body.row_count, 100);
  });

  test("arrival in bursts: rows appear in n steps, quiet in between", async () => {
    const { jobUid } = server.sim.createJob({ rows: 100, durationMs: 4000, arrival: { bursts: 4 } });
    const seen = [];
    for (const step of [999, 1, 998, 2, 1000]) {
      clock.advance(step);
      seen.push((await getJson(server, `/jobs/${jobUid}/results`)).body.results.length);
    }
    assert.deepEqual(seen, [0, 25, 25, 50, 75]);
    assert.throws(() => server.sim.createJob({ arrival: { bursts: 0 } }), TypeError);
  });

  test("errorShape v4: errors carry error_label, error_scope, error_ref, message, status_code, params", async () => {
    const v4 = await startSimServer({ clock, errorShape: "v4" });
    try {
      const keys = ["error_label", "error_scope", "error_ref", "message", "status_code", "params"];
      const wrongKey = await getJson(v4, "/jobs/x", { headers: { authorization: "x-api-key nope" } });
      assert.deepEqual(Object.keys(wrongKey.body), keys);
      assert.deepEqual([wrongKey.body.error_label, wrongKey.body.status_code], ["UNAUTHORIZED", 401]);
      const missing = await getJson(v4, "/jobs/no-such-job");
      assert.deepEqual([missing.status, missing.body.error_label], [404, "NOT_FOUND"]);
      const failed = v4.sim.createJob({ rows: 5, durationMs: 0, outcome: "allInputsFailed" });
      const results = await getJson(v4, `/jobs/${failed.jobUid}/results`);
      assert.deepEqual([results.status, results.body.error_label, results.body.message], [400, "ALL_INPUTS_FAILED", "All Inputs Failed"]);
    } finally {
      await v4.close();
    }
    // Per job too, on the default (v3) simulator.
    const { jobUid } = server.sim.createJob({ rows: 5, durationMs: 0, errorShape: "v4", faults: { script: [{ kind: "run", nth: 1, respond: 503 }] } });
    const res = await getJson(server, `/jobs/${jobUid}`);
    assert.deepEqual([res.status, res.body.error_label, res.body.status_code], [503, "SERVICE_UNAVAILABLE", 503]);
  });

  test("rateLimitReset: 429s carry X-RateLimit-Reset as seconds or a Unix time", async () => {
    const script = [{ kind: "results", nth: 1, respond: 429, retryAfter: 3 }];
    const delta = server.sim.createJob({ rows: 1, durationMs: 0, faults: { rateLimitReset: "delta", script } });
    const epoch = server.sim.createJob({ rows: 1, durationMs: 0, faults: { rateLimitReset: "epoch", script } });
    const a = await call(server, `/jobs/${delta.jobUid}/results`);
    const b = await call(server, `/jobs/${epoch.jobUid}/results`);
    assert.deepEqual([a.status, a.headers.get("x-ratelimit-reset"), a.headers.get("retry-after")], [429, "3", "3"]);
    assert.deepEqual([b.status, b.headers.get("x-ratelimit-reset")], [429, String(Math.ceil(clock.now() / 1000) + 3)]);
    assert.match(a.headers.get("access-control-expose-headers"), /x-ratelimit-reset/);
    assert.throws(() => server.sim.createJob({ faults: { rateLimitReset: "soon" } }), TypeError);
  });

  test("cors false: preflights refused and no CORS header; a list allows only its origins", async () => {
    const preflight = (target, origin) =>
      fetch(`${target.url}/jobs/x/results`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
      });
    const closed = await startSimServer({ clock, cors: false });
    const listed = await startSimServer({ clock, cors: ["http://127.0.0.1:5173"] });
    try {
      const refused = await preflight(closed, "http://127.0.0.1:5173");
      assert.equal(refused.status, 405);
      assert.equal(refused.headers.get("access-control-allow-origin"), null);
      const get = await call(closed, "/jobs/x");
      assert.equal(get.headers.get("access-control-allow-origin"), null);
      assert.equal(closed.sim.stats().requests.preflight, 1);
      const ok = await preflight(listed, "http://127.0.0.1:5173");
      assert.deepEqual([ok.status, ok.headers.get("access-control-allow-origin")], [204, "http://127.0.0.1:5173"]);
      const other = await preflight(listed, "http://127.0.0.1:9999");
      assert.deepEqual([other.status, other.headers.get("access-control-allow-origin")], [405, null]);
    } finally {
      await closed.close();
      await listed.close();
    }
    assert.throws(() => createSim({ cors: "yes" }), TypeError);
  });
});

describe("counters", () => {
  test("a bench's replay: answered as the request it replays was, uncounted", async () => {
    const clock = manualClock(0);
    const server = await startSimServer({ clock });
    try {
      const { jobUid } = server.sim.createJob({ rows: 30, durationMs: 30_000, pageSize: 100 });
      clock.advance(10_000);
      const asked = await getJson(server, `/jobs/${jobUid}/results`);
      const status = await getJson(server, `/jobs/${jobUid}`);
      assert.equal(asked.body.results.length, 10);
      clock.advance(10_000); // 10 more rows since
      const replay = { headers: { [REPLAY_HEADER]: "1" } };
      assert.deepEqual((await getJson(server, `/jobs/${jobUid}/results`, replay)).body, asked.body);
      assert.deepEqual((await getJson(server, `/jobs/${jobUid}`, replay)).body, status.body);
      assert.equal(server.sim.stats(jobUid).requests.total, 2);
      assert.equal((await getJson(server, `/jobs/${jobUid}/results`)).body.results.length, 20);
      // A URL never asked is answered as of now.
      const unasked = await getJson(server, `/jobs/${jobUid}/results?page=1`, replay);
      assert.equal(unasked.body.results.length, 20);
    } finally {
      await server.close();
    }
  });

  test("requests and response bytes per kind, with a log a test can read", async () => {
    const server = await startSimServer({ clock: manualClock(0) });
    try {
      const { jobUid } = server.sim.createJob({ rows: 25, durationMs: 0, pageSize: 10 });
      let received = 0;
      for (const path of [
        `/jobs/${jobUid}`,
        `/jobs/${jobUid}/results`,
        `/jobs/${jobUid}/results?page=2`,
        `/jobs/${jobUid}/results?page=3`,
        "/elsewhere",
      ]) {
        received += (await (await call(server, path)).arrayBuffer()).byteLength;
      }
      const stats = server.sim.stats(jobUid);
      assert.deepEqual([stats.requests.run, stats.requests.results, stats.requests.total], [1, 3, 4]);
      const all = server.sim.stats();
      assert.deepEqual([all.requests.other, all.requests.total], [1, 5]);
      assert.equal(all.bytes.total, received);
      assert.deepEqual(
        all.log.map((e) => e.status),
        [200, 200, 200, 200, 404],
      );
      assert.deepEqual(all.log.map((e) => e.path).slice(1, 3), [
        `/v3/jobs/${jobUid}/results`,
        `/v3/jobs/${jobUid}/results?page=2`,
      ]);
      await control(server, "/reset", {});
      assert.equal(server.sim.stats().requests.total, 0);
    } finally {
      await server.close();
    }
  });

  test("naiveCost: a status read plus every page from page 1 on each tick", () => {
    const sim = createSim({ clock: manualClock(0) });
    const { jobUid } = sim.createJob({ rows: 1000, durationMs: 10000, pageSize: 100 });
    // ticks at 0 s … 10 s; at tick i there are 100·i rows → max(1, i) pages.
    const cost = sim.naiveCost(jobUid, { intervalMs: 1000 });
    assert.deepEqual([cost.ticks, cost.requests], [11, 11 + 1 + 55]);
    assert.ok(cost.bytes > 55 * 100 * 150);
  });
});

describe("faults", () => {
  let server;
  const clock = manualClock(Date.UTC(2025, 0, 1));
  before(async () => {
    server = await startSimServer({ clock, seed: 3 });
  });
  after(() => server.close());

  test("script: 429 with Retry-After seconds, then with an HTTP date, then normal", async () => {
    const { jobUid } = server.sim.createJob({
      rows: 10,
      durationMs: 0,
      faults: {
        script: [
          { kind: "results", nth: 1, respond: 429, retryAfter: 2 },
          { kind: "results", nth: 2, respond: 429, retryAfter: "date" },
        ],
      },
    });
    const first = await call(server, `/jobs/${jobUid}/results`);
    assert.deepEqual([first.status, first.headers.get("retry-after")], [429, "2"]);
    const second = await call(server, `/jobs/${jobUid}/results`);
    assert.equal(second.status, 429);
    assert.equal(Date.parse(second.headers.get("retry-after")), Math.floor((clock.now() + 1000) / 1000) * 1000);
    assert.equal((await call(server, `/jobs/${jobUid}/results`)).status, 200);
    // run reads are counted separately: the script targets results only
    assert.equal((await call(server, `/jobs/${jobUid}`)).status, 200);
  });

  test("script: a 5xx burst of `count` requests, on any kind", async () => {
    const { jobUid } = server.sim.createJob({
      rows: 10,
      durationMs: 0,
      faults: { script: [{ kind: "any", nth: 2, respond: 503, count: 3 }] },
    });
    const statuses = [];
    for (const path of ["", "/results", "", "/results", "/results"])
      statuses.push((await call(server, `/jobs/${jobUid}${path}`)).status);
    assert.deepEqual(statuses, [200, 503, 503, 503, 200]);
  });

  test("drop: the connection closes, fetch rejects with a TypeError; logged as status 0", async () => {
    const { jobUid } = server.sim.createJob({
      rows: 10,
      durationMs: 0,
      faults: { script: [{ kind: "run", nth: 1, respond: "drop" }] },
    });
    await assert.rejects(call(server, `/jobs/${jobUid}`), TypeError);
    assert.equal((await call(server, `/jobs/${jobUid}`)).status, 200);
    const log = server.sim.stats(jobUid).log;
    assert.deepEqual(
      log.map((e) => [e.status, e.error]),
      [
        [0, "dropped"],
        [200, undefined],
      ],
    );
  });

  test("handle() itself rejects with a TypeError on a drop", async () => {
    const sim = createSim({ clock });
    const { jobUid } = sim.createJob({ rows: 1, durationMs: 0, faults: { dropRate: 1 } });
    await assert.rejects(
      sim.handle(new Request(`http://x/v3/jobs/${jobUid}`, { headers: AUTH })),
      (e) => e instanceof TypeError && e.simDrop === true,
    );
  });

  test("malformed: a 200 whose JSON body is truncated", async () => {
    const { jobUid } = server.sim.createJob({
      rows: 10,
      durationMs: 0,
      faults: { script: [{ kind: "results", nth: 1, respond: "malformed" }] },
    });
    const res = await call(server, `/jobs/${jobUid}/results`);
    assert.equal(res.status, 200);
    await assert.rejects(res.json(), SyntaxError);
    assert.equal((await (await call(server, `/jobs/${jobUid}/results`)).json()).results.length, 10);
  });

  test("slow: the answer waits; an aborted request ends the wait and is logged as aborted", async () => {
    const wall = await startSimServer();
    try {
      const { jobUid } = wall.sim.createJob({
        rows: 1,
        durationMs: 0,
        faults: { script: [{ kind: "results", nth: 1, respond: "slow", ms: 60000 }] },
      });
      const aborter = new AbortController();
      const pending = call(wall, `/jobs/${jobUid}/results`, { signal: aborter.signal });
      await wall.sim.until(() => wall.sim.stats(jobUid).log.length === 1, { what: "the request in the slow wait" });
      aborter.abort();
      await assert.rejects(pending, { name: "AbortError" });
      await wall.sim.until(() => wall.sim.stats(jobUid).log[0].status !== null, { what: "the abort seen by the simulator" });
      assert.deepEqual(
        wall.sim.stats(jobUid).log.map((e) => [e.status, e.error]),
        [[0, "aborted"]],
      );
      const slowOnce = wall.sim.createJob({
        rows: 1,
        durationMs: 0,
        faults: { script: [{ kind: "run", nth: 1, respond: "slow", ms: 30 }] },
      });
      assert.equal((await call(wall, `/jobs/${slowOnce.jobUid}`)).status, 200);
    } finally {
      await wall.close();
    }
  });

  test("flapStatus: running reads vary among non-terminal statuses, never a false end", async () => {
    const { jobUid } = server.sim.createJob({ rows: 100, durationMs: 10000, faults: { flapStatus: true } });
    const seen = new Set();
    for (let i = 0; i < 40; i++) seen.add((await getJson(server, `/jobs/${jobUid}`)).body.status);
    assert.ok(seen.size > 1, [...seen].join());
    for (const s of seen) assert.ok(["running", "paused", "pending", "queued"].includes(s), s);
    clock.advance(10000);
    assert.equal((await getJson(server, `/jobs/${jobUid}`)).body.status, "finished");
  });

  test("duplicateRows: page N+1 starts with the last k rows of page N", async () => {
    const { jobUid } = server.sim.createJob({ rows: 30, durationMs: 0, pageSize: 10, faults: { duplicateRows: 3 } });
    const rows = await readAllPages(server, jobUid);
    const ids = rows.map((r) => r.index);
    assert.deepEqual(ids.slice(0, 13), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 7, 8, 9]);
    assert.deepEqual([...new Set(ids)].length, 30);
  });

  test("wrongCredentials: every request is 401 even with the right key", async () => {
    const { jobUid } = server.sim.createJob({ rows: 1, faults: { wrongCredentials: true } });
    assert.equal((await call(server, `/jobs/${jobUid}`)).status, 401);
    assert.equal((await call(server, `/jobs/${jobUid}/results`)).status, 401);
  });

  test("random rates are seeded: same seed, same answers; another seed, other answers", async () => {
    const faults = { rate429: 0.2, rate5xx: 0.2, malformedRate: 0.1, dropRate: 0.1, retryAfter: 1 };
    const sequence = async (seed) => {
      const sim = createSim({ seed, clock });
      const { jobUid } = sim.createJob({ rows: 10, durationMs: 0, faults });
      const out = [];
      for (let i = 0; i < 60; i++) {
        try {
          const res = await sim.handle(new Request(`http://x/v3/jobs/${jobUid}/results`, { headers: AUTH }));
          const text = await res.text();
          out.push(`${res.status}:${text.length}`);
        } catch {
          out.push("drop");
        }
      }
      return out;
    };
    const a = await sequence(11);
    assert.deepEqual(a, await sequence(11));
    assert.notDeepEqual(a, await sequence(12));
    for (const kind of ["drop", "429", "200"])
      assert.ok(
        a.some((s) => s.startsWith(kind)),
        kind,
      );
    assert.ok(a.some((s) => /^50[0234]:/.test(s)));
  });

  test("a bad fault plan is refused", () => {
    assert.throws(() => server.sim.createJob({ faults: { rate429: 2 } }), TypeError);
    assert.throws(
      () => server.sim.createJob({ faults: { script: [{ kind: "results", nth: 0, respond: 429 }] } }),
      TypeError,
    );
  });
});

describe("webhook", () => {
  let receiver;
  let received;
  let receiverUrl;
  before(async () => {
    received = [];
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body: JSON.parse(body) });
        res.end("ok");
      });
    });
    await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
    receiverUrl = `http://127.0.0.1:${receiver.address().port}/hook`;
  });
  after(() => new Promise((r) => receiver.close(r)));

  test("Created when a job starts; Succeeded/Failed when it ends (manual clock: noticed on the next request)", async () => {
    const clock = manualClock(0);
    const server = await startSimServer({
      clock,
      webhook: { url: receiverUrl, headers: { "x-hook-secret": "s3cret" } },
    });
    try {
      const ok = server.sim.createJob({ rows: 5, durationMs: 1000, name: "Hooked" });
      const failed = server.sim.createJob({ rows: 5, durationMs: 1000, outcome: "shutdown" });
      await call(server, `/jobs/${ok.jobUid}`);
      await server.sim.webhooksSettled();
      const created = received.map((r) => [r.body.job_uid, r.body.message, r.body.error]);
      assert.deepEqual(created, [
        [ok.jobUid, "Job successfully created.", null],
        [failed.jobUid, "Job successfully created.", null],
      ]);
      clock.advance(1000);
      await call(server, `/jobs/${ok.jobUid}`);
      await server.sim.webhooksSettled();
      const ends = received.slice(2);
      const byJob = Object.fromEntries(ends.map((r) => [r.body.job_uid, r]));
      assert.deepEqual([byJob[ok.jobUid].body.message, byJob[ok.jobUid].body.error], ["Job successfully finished.", null]);
      assert.equal(byJob[ok.jobUid].body.job_name, "Hooked");
      assert.equal(byJob[ok.jobUid].headers["x-hook-secret"], "s3cret");
      assert.equal(byJob[failed.jobUid].body.message, "Job failed.");
      assert.equal(typeof byJob[failed.jobUid].body.error, "string");
      for (const key of [
        "uid",
        "job_uid",
        "message",
        "project_uid",
        "error",
        "recipe_ref",
        "workflow_uid",
        "workflow_name",
        "job_name",
      ]) {
        assert.ok(key in byJob[ok.jobUid].body, key);
      }
      server.sim.tick();
      await server.sim.webhooksSettled();
      assert.equal(received.length, 4, "each job notified once per event");
      assert.deepEqual(
        server.sim.webhooks().map((w) => [w.event, w.status]),
        [
          ["created", 200],
          ["created", 200],
          ["succeeded", 200],
          ["failed", 200],
        ],
      );
    } finally {
      await server.close();
      received.length = 0;
    }
  });

  test("with the wall clock a timer sends it when the run ends; stop() sends it at once", async () => {
    const server = await startSimServer({ webhook: { url: receiverUrl, events: ["succeeded", "failed"] } });
    try {
      const timed = server.sim.createJob({ rows: 5, durationMs: 50 });
      const stopped = server.sim.createJob({ rows: 5, durationMs: 60000 });
      server.sim.stop(stopped.jobUid);
      // The timer's webhook is answered by the receiver (logged as settled): both have arrived.
      await server.sim.until(() => server.sim.webhooks().filter((h) => h.status !== null).length === 2, { what: "both webhooks answered" });
      const messages = Object.fromEntries(received.map((r) => [r.body.job_uid, r.body.message]));
      assert.deepEqual(messages, { [timed.jobUid]: "Job successfully finished.", [stopped.jobUid]: "Job failed." });
    } finally {
      await server.close();
      received.length = 0;
    }
  });

  test("Created waits for the job to start (startDelayMs); a job stopped while pending never had it", async () => {
    const clock = manualClock(0);
    const server = await startSimServer({ clock, webhook: { url: receiverUrl, events: ["created"] } });
    try {
      const late = server.sim.createJob({ rows: 5, durationMs: 1000, startDelayMs: 500 });
      const never = server.sim.createJob({ rows: 5, durationMs: 1000, startDelayMs: 500 });
      const early = server.sim.createJob({ rows: 5, durationMs: 1000, startDelayMs: 60_000 });
      server.sim.stop(never.jobUid);
      await server.sim.webhooksSettled();
      assert.equal(received.length, 0, "not before the start");
      clock.advance(500);
      await call(server, `/jobs/${late.jobUid}`);
      server.sim.start(early.jobUid); // started on command: Created at once
      await server.sim.webhooksSettled();
      assert.deepEqual(
        received.map((r) => [r.body.job_uid, r.body.message]),
        [
          [late.jobUid, "Job successfully created."],
          [early.jobUid, "Job successfully created."],
        ],
      );
    } finally {
      await server.close();
      received.length = 0;
    }
  });

  test("webhookLeadMs: the success webhook comes before the API's status says finished", async () => {
    const clock = manualClock(0);
    const server = await startSimServer({ clock, webhook: { url: receiverUrl, events: ["succeeded"] } });
    try {
      const { jobUid } = server.sim.createJob({ rows: 100, durationMs: 1000, webhookLeadMs: 400 });
      clock.advance(500);
      server.sim.tick();
      await server.sim.webhooksSettled();
      assert.equal(received.length, 0, "not yet: 500 ms before the end");
      clock.advance(100); // 400 ms before the end
      const run = (await getJson(server, `/jobs/${jobUid}`)).body;
      await server.sim.webhooksSettled();
      assert.deepEqual(
        received.map((r) => r.body.message),
        ["Job successfully finished."],
      );
      assert.deepEqual([run.status, run.row_count], ["running", 60], "the API still says running");
      clock.advance(400);
      assert.equal((await getJson(server, `/jobs/${jobUid}`)).body.status, "finished");
      await server.sim.webhooksSettled();
      assert.equal(received.length, 1, "sent once");
    } finally {
      await server.close();
      received.length = 0;
    }
  });
});
