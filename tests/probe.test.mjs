// `npm run probe` against the simulator: the table says what the API answered on each open point.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { root } from "../scripts/exec.mjs";
import { manualClock } from "../sim/index.js";
import { startSimServer } from "../sim/server.mjs";
import { simChanges, until } from "./support/until.mjs";

const API_KEY = "sk_test_probe_5150";
const PROJECT_ID = "probe-project";

/** Runs scripts/probe.mjs to its end; resolves with its exit code, output and table rows. */
function runProbe(args, env) {
  const child = spawn(process.execPath, [path.join(root, "scripts", "probe.mjs"), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, PROBE_POLL_MS: "50", PROBE_WAIT_MS: "10000", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c) => (stderr += c));
  return new Promise((resolve) => {
    child.on("close", (code) => {
      const rows = Object.fromEntries(
        stdout
          .split("\n")
          .filter((l) => l.startsWith("| ") && !l.startsWith("| ---") && !l.startsWith("| open point"))
          .map((l) => l.slice(2, -2).split(" | ")),
      );
      resolve({ code, stdout, stderr, rows });
    });
  });
}

const connection = (server) => ({
  CAPTAINDATA_API_KEY: API_KEY,
  CAPTAINDATA_PROJECT_ID: PROJECT_ID,
  CAPTAINDATA_BASE_URL: server.url,
});

test("the real API's shapes: 1000-row pages, next as a page number, 404 results while pending, lagging counts", async () => {
  // The simulator's time moves only on the test's command, once the probe has seen each stage of
  // the run it schedules (a busy machine can be slower than any start delay in wall time).
  const clock = manualClock(Date.now());
  const server = await startSimServer({
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    clock,
    // Runs the probe schedules: pending for a moment, with /results 404 meanwhile.
    defaults: { rows: 5, startDelayMs: 300, durationMs: 1500, resultsWhilePending: 404 },
  });
  try {
    const { jobUid } = server.sim.createJob({ rows: 2500, durationMs: 0, startDelayMs: 0, resultsWhilePending: null, nextForm: "page", countLagMs: 3_600_000 });
    const probed = runProbe([jobUid, "wf-probe"], connection(server));
    const { sim } = server;
    const reads = (kind) => sim.stats().log.filter((e) => e.kind === kind && e.jobUid !== jobUid && e.status !== null);
    // Pending until the probe read its results; running until it read its status once more.
    await until(() => reads("results").length > 0, { on: [simChanges(sim)], what: "the probe reading the scheduled run's results" });
    clock.advance(300);
    const statusReads = reads("run").length;
    await until(() => reads("run").length > statusReads, { on: [simChanges(sim)], what: "the probe reading the scheduled run running" });
    clock.advance(1500);
    const { code, stdout, stderr, rows } = await probed;
    assert.equal(code, 0, stderr);
    assert.equal(rows["page size"], "1000", stdout);
    assert.equal(rows["paging.next"], "page number (JSON number): 2");
    assert.match(rows["page numbering"], /^page=1 is the first page/);
    assert.match(rows["/results right after scheduling"], /^404 \{"message":"No results for this job yet"\} \(the run: 200 status "pending"\)$/);
    assert.match(rows["row_count vs rows readable"], /^row_count 0, total_row_count 0; readable 2500 in 3 page\(s\)/);
    assert.match(rows["wrong project id"], /^403 /);
    assert.match(rows["unknown job uid"], /^404 /);
    assert.match(rows["CORS preflight (OPTIONS with an Origin)"], /^204, Access-Control-Allow-Origin "\*"/);
    assert.equal(rows["statuses seen"], "job: finished; scheduled run: pending → running → finished");
    assert.equal(rows["error body keys"], "{message}");
    assert.ok(!stdout.includes(API_KEY) && !stderr.includes(API_KEY), "the key is in no output");
    // The probe's requests: the key only ever in the Authorization header, never in a URL.
    assert.ok(server.sim.stats().log.every((e) => !e.path.includes(API_KEY)));
    assert.equal(server.sim.stats().requests.schedule, 1, "one tiny run scheduled");
  } finally {
    await server.close();
  }
});

test("another API: absolute next URLs from page 0, v4 error bodies, no CORS, capitals", async () => {
  const server = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID, errorShape: "v4", cors: false });
  try {
    const { jobUid } = server.sim.createJob({ rows: 1500, durationMs: 0, pageBase: 0, statusCase: "upper" });
    const { code, stderr, rows } = await runProbe([], { ...connection(server), CAPTAINDATA_JOB_UID: jobUid });
    assert.equal(code, 0, stderr);
    assert.equal(rows["paging.next"], `absolute URL (same origin): "${server.url}/jobs/${jobUid}/results?page=1"`);
    assert.equal(rows["page size"], "1000");
    assert.match(rows["page numbering"], /^page=0 is the first page \(page=1: 200, page=0: 200\)/);
    assert.match(rows["row_count vs rows readable"], /^row_count 1500, total_row_count 1500; readable 1500 in 2 page\(s\)/);
    assert.match(rows["schedule a tiny run"], /^not asked/);
    assert.match(rows["CORS preflight (OPTIONS with an Origin)"], /^405, Access-Control-Allow-Origin absent/);
    assert.equal(rows["statuses seen"], "job: FINISHED");
    assert.equal(rows["error body keys"], "{error_label, error_scope, error_ref, message, status_code, params}");
  } finally {
    await server.close();
  }
});

test("without a key or a run the probe says what is missing and sends nothing", async () => {
  const server = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID });
  try {
    const noKey = await runProbe(["some-job"], { CAPTAINDATA_PROJECT_ID: PROJECT_ID, CAPTAINDATA_BASE_URL: server.url });
    assert.equal(noKey.code, 1);
    assert.match(noKey.stderr, /CAPTAINDATA_API_KEY is not set/);
    const noRun = await runProbe([], connection(server));
    assert.equal(noRun.code, 1);
    assert.match(noRun.stderr, /job uid/);
    assert.equal(server.sim.stats().requests.total, 0);
  } finally {
    await server.close();
  }
});

/** A callback receiver on 127.0.0.1 that answers 500: the probe's run's deliveries fail, as to a URL nobody serves. */
async function failingReceiver() {
  const { createServer } = await import("node:http");
  const bodies = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      bodies.push({ headers: req.headers, body: JSON.parse(text) });
      res.writeHead(500).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/callbacks`, bodies, close: () => new Promise((r) => server.close(r)) };
}

test("v4: the auth header, the launch's answer, the statuses, the deliveries list and the replay limit", async () => {
  const receiver = await failingReceiver();
  const server = await startSimServer({ apiKey: API_KEY, v4Defaults: { rows: 15, pageSize: 10, durationMs: 300, startDelayMs: 150 } });
  try {
    const { code, stdout, stderr, rows } = await runProbe([], {
      CAPTAINDATA_V4_API_KEY: API_KEY,
      CAPTAINDATA_V4_BASE_URL: `${server.origin}/v4`,
      CAPTAINDATA_V4_ACTION: "linkedin-extract-people",
      CAPTAINDATA_V4_INPUTS: JSON.stringify([{ linkedin_profile_url: "https://www.linkedin.com/in/someone" }]),
      CAPTAINDATA_V4_CALLBACK_URL: receiver.url,
    });
    assert.equal(code, 0, stderr);
    assert.equal(rows["v4 auth (GET /runs/callbacks)"], "X-API-Key: 200; no key: 401; v3's Authorization header instead: 401", stdout);
    assert.equal(rows["v4 error body keys"], "{error_label, error_scope, error_ref, message, status_code, params}");
    assert.match(rows["v4 launch (POST /actions/{action}/async, callback headers as an object)"], /^201, keys run_uid, status, .*; the run uid is in `run_uid`$/);
    assert.equal(rows["v4 statuses seen (the launched run)"], "QUEUED → RUNNING → SUCCEEDED");
    assert.match(rows["v4 GET /runs/{uid}"], /^200, keys uid, action_name, execution_mode, status/);
    assert.match(rows["v4 deliveries list (GET /runs/callbacks?run_uid=)"], /^200, a JSON array; 3 for the run \(statuses (FAILED|RUNNING)(, (FAILED|RUNNING))?\); a delivery's keys: uid, parent_uid, retry_count, .*batch_uid/);
    assert.equal(
      rows["v4 replay limit (POST /runs/callbacks/{uid}/replay)"],
      "3 accepted then 400; a replay's parent_uid is the original, retry_count 1, same batch_uid true",
    );
    assert.equal(rows["v4 replay of a replay"], "400");
    assert.match(rows["v4 not confirmed here"], /callbacks reach the URL/);
    assert.equal(rows["statuses seen"], undefined, "a v4 key alone asks v4 only");
    assert.ok(!stdout.includes(API_KEY) && !stderr.includes(API_KEY), "the key is in no output");
    const { requests, log } = server.sim.stats();
    assert.deepEqual([requests["v4-launch"], requests["v4-replay"], requests.run + requests.results], [1, 5, 0]);
    assert.ok(log.every((e) => !e.path.includes(API_KEY)));
    // The callbacks carried the probe's header, never the key.
    assert.ok(receiver.bodies.length >= 3 && receiver.bodies.every((b) => b.headers["x-captaindata-poller-probe"] === "1"));
    assert.ok(receiver.bodies.every((b) => !JSON.stringify(b).includes(API_KEY)));
  } finally {
    await server.close();
    await receiver.close();
  }
});

test("v4 with a run of yours: read only (its status and deliveries), no replay", async () => {
  const receiver = await failingReceiver();
  const server = await startSimServer({ apiKey: API_KEY });
  try {
    const { runUid } = server.sim.v4.launch({ callback: { url: receiver.url }, spec: { rows: 5, durationMs: 0 } });
    await server.sim.until(() => server.sim.v4.deliveries(runUid).every((d) => d.status === "FAILED"), { what: "the run's deliveries failed" });
    const { code, stderr, rows } = await runProbe([], { CAPTAINDATA_V4_API_KEY: API_KEY, CAPTAINDATA_V4_BASE_URL: `${server.origin}/v4`, CAPTAINDATA_V4_RUN_UID: runUid });
    assert.equal(code, 0, stderr);
    assert.equal(rows["v4 statuses seen (your run)"], "SUCCEEDED");
    assert.match(rows["v4 launch (POST /actions/{action}/async)"], /^not asked/);
    assert.match(rows["v4 replay limit"], /^not tried/);
    assert.equal(server.sim.stats().requests["v4-replay"], 0);
    const bad = await runProbe([], { CAPTAINDATA_V4_API_KEY: API_KEY, CAPTAINDATA_V4_INPUTS: "{nope" });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /CAPTAINDATA_V4_INPUTS is not JSON/);
  } finally {
    await server.close();
    await receiver.close();
  }
});
