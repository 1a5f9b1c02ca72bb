// The README's Node examples, run as written (their own process, the package by name) against
// the simulator standing in for https://api.captaindata.co: what they print and write.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { inspect } from "node:util";
import { makeRow } from "../../sim/rows.js";
import { startSimServer } from "../../sim/server.mjs";
import { API_KEY, API_ORIGIN, PLACEHOLDER_JOB, PROJECT_ID, exampleDir, placeExample, runNode } from "./example-fixture.mjs";

let server;
let work;
const env = { CAPTAINDATA_API_KEY: API_KEY, CAPTAINDATA_PROJECT_ID: PROJECT_ID };
before(async () => {
  // Runs that have ended: a poller with the default 10 s interval reads them at once.
  server = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 3, defaults: { rows: 30, durationMs: 0, pageSize: 10 } });
  work = exampleDir("node");
});
after(async () => {
  await server?.close();
  work?.remove();
});

const origins = () => ({ [API_ORIGIN]: server.origin });
const ids = (rows) => rows.map((r) => r.id);
const rowIds = (n) => Array.from({ length: n }, (_, i) => `row-${i}`);
const ndjson = (file) => readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

/** A simulator of its own, for a test whose run has the examples' placeholder uid. */
async function ownSim(t, spec) {
  const own = await startSimServer({ apiKey: API_KEY, projectId: PROJECT_ID, seed: 4 });
  t.after(() => own.close());
  own.sim.createJob({ jobUid: PLACEHOLDER_JOB, durationMs: 0, pageSize: 10, ...spec });
  return own;
}

/** A fresh folder per example, so files one writes never meet another's. */
function folder(name) {
  const dir = path.join(work.dir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  return dir;
}

test("examples/node/quick-start.js: every row printed, then the summary", async (t) => {
  const own = await ownSim(t, { rows: 25 });
  const cwd = folder("quick-start");
  const script = await placeExample("examples/node/quick-start.js", cwd);
  const out = await runNode(script, { cwd, env, origins: { [API_ORIGIN]: own.origin } });
  assert.equal(out.code, 0, out.tail);
  assert.deepEqual(out.stdout.match(/^rows \d+–\d+/gm), ["rows 1–10", "rows 11–20", "rows 21–25"]);
  assert.match(out.stdout, /finished: 25 rows in \d+ requests\n$/);
  assert.ok(!out.stdout.includes(API_KEY) && !out.stderr.includes(API_KEY), "the key is in no output");
});

test("examples/node/watch.js <jobUid>: rows.ndjson holds every row once, in order", async () => {
  const { jobUid } = server.sim.createJob({ rows: 2500, durationMs: 0, pageSize: 1000 });
  const cwd = folder("watch");
  const script = await placeExample("examples/node/watch.js", cwd);
  const usage = await runNode(script, { cwd, env, origins: origins() });
  assert.notEqual(usage.code, 0, "no jobUid: it says how to call it");
  assert.match(usage.stderr, /usage: node watch\.js <jobUid>/);
  const out = await runNode(script, { args: [jobUid], cwd, env, origins: origins() });
  assert.equal(out.code, 0, out.tail);
  assert.equal(out.stdout, "2500 rows in rows.ndjson\n");
  assert.deepEqual(ids(ndjson(path.join(cwd, "rows.ndjson"))), rowIds(2500));
  assert.equal(server.sim.stats(jobUid).requests.results, 3, "each page read once");
});

test("examples/node/schedule.js: schedules the run with inputs.json, then polls it to its end", async () => {
  const cwd = folder("schedule");
  writeFileSync(path.join(cwd, "inputs.json"), JSON.stringify([{ linkedin_profile_url: "https://www.linkedin.com/in/ada" }]));
  const script = await placeExample("examples/node/schedule.js", cwd);
  const out = await runNode(script, { cwd, env, origins: origins() });
  assert.equal(out.code, 0, out.tail);
  const [, jobUid] = /^scheduled (\S+)\n/.exec(out.stdout) ?? [];
  assert.ok(jobUid, out.stdout);
  assert.equal(server.sim.job(jobUid).status, "finished");
  assert.match(out.stdout, /\n30 rows\n$/);
});

test("examples/node/consumer-fails.js: a failing onBatch saves the cursor; the next run goes on from it, no row twice", async (t) => {
  const own = await ownSim(t, { rows: 40 });
  const cwd = folder("consumer-fails");
  const script = await placeExample("examples/node/consumer-fails.js", cwd);
  mkdirSync(path.join(cwd, "rows.ndjson")); // appendFile fails: the consumer cannot take the first batch
  const failed = await runNode(script, { cwd, env, origins: { [API_ORIGIN]: own.origin } });
  assert.equal(failed.code, 1, failed.tail);
  assert.ok(existsSync(path.join(cwd, "cursor.txt")), "the cursor was saved");
  rmSync(path.join(cwd, "rows.ndjson"), { recursive: true });
  const again = await runNode(script, { cwd, env, origins: { [API_ORIGIN]: own.origin } });
  assert.equal(again.code, 0, again.tail);
  assert.deepEqual(ids(ndjson(path.join(cwd, "rows.ndjson"))), rowIds(40), "the batch that failed came again, then the rest");
});

test("examples/node/typed-rows.ts (compiled as tsx would): each row's full_name printed", async (t) => {
  const own = await ownSim(t, { rows: 3 });
  const cwd = folder("typed-rows");
  const script = await placeExample("examples/node/typed-rows.ts", cwd);
  const out = await runNode(script, { cwd, env, origins: { [API_ORIGIN]: own.origin } });
  assert.equal(out.code, 0, out.tail);
  const names = [0, 1, 2].map((i) => makeRow(PLACEHOLDER_JOB, i).full_name);
  assert.equal(out.stdout, `${inspect(names)}\n`, "one batch of three names");
});
