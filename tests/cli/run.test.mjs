// `run`: schedules the workflow with inputs from a CSV (or JSON) file, prints the job uid on
// stderr, then streams the run's rows; its mistakes name the file and line at fault.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { cliEnv, ndjsonIds, readScratch, rowIds, runCli, simFlags, useCliSim } from "./cli-fixture.mjs";

// Runs scheduled over the API get these (the simulator's defaults are a 20 s run).
const ctx = useCliSim({ defaults: { rows: 1500, durationMs: 1500, arrival: { bursts: 3 } } });
const scratch = (name, text) => writeFileSync(path.join(ctx.dir, name), text);

test("run schedules from a CSV file, prints the job uid on stderr, and streams the rows on stdout", async () => {
  scratch("profiles.csv", 'linkedin_profile_url,note\nhttps://www.linkedin.com/in/ada,"first, with a comma"\nhttps://www.linkedin.com/in/bob,\r\nhttps://www.linkedin.com/in/cy,"says ""hi"""\n');
  const { code, stdout, stderr } = await runCli(ctx, ["run", "wf-leads", "--inputs", "profiles.csv", "--job-name", "Q3 leads", ...simFlags(ctx)]);
  assert.equal(code, 0, stderr);
  const jobUid = /scheduled run (\S+) of workflow wf-leads \(3 inputs\)/.exec(stderr)?.[1];
  assert.ok(jobUid, stderr);
  const job = ctx.sim.job(jobUid);
  assert.equal(job.spec.inputs, 3, "three inputs scheduled");
  assert.equal(job.spec.name, "Q3 leads");
  assert.deepEqual(ndjsonIds(stdout), rowIds(1500));
});

test("run with --state: the same command again continues the run it scheduled instead of scheduling another", async () => {
  scratch("two.json", JSON.stringify([{ linkedin_profile_url: "a" }, { linkedin_profile_url: "b" }]));
  const args = ["run", "wf-again", "--inputs", "two.json", "--out", "again.ndjson", "--state", "again.state.json", ...simFlags(ctx)];
  const first = await runCli(ctx, args);
  assert.equal(first.code, 0, first.stderr);
  const scheduled = ctx.sim.stats().requests.schedule;
  const second = await runCli(ctx, args);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, /no new run is scheduled/);
  assert.equal(ctx.sim.stats().requests.schedule, scheduled, "no second schedule request");
  assert.deepEqual(ndjsonIds(readScratch(ctx, "again.ndjson")), rowIds(1500));
});

test("a malformed inputs file exits 2, naming the file and the line", async () => {
  scratch("broken.csv", 'url,name\nhttps://a,"unclosed\n');
  const broken = await runCli(ctx, ["run", "wf", "--inputs", "broken.csv", ...simFlags(ctx)]);
  assert.equal(broken.code, 2);
  assert.match(broken.stderr, /--inputs broken\.csv: line 2: a quoted field is not closed/);

  scratch("ragged.csv", "url,name\nhttps://a,A,extra\n");
  const ragged = await runCli(ctx, ["run", "wf", "--inputs", "ragged.csv", ...simFlags(ctx)]);
  assert.equal(ragged.code, 2);
  assert.match(ragged.stderr, /--inputs ragged\.csv: line 2: 3 fields, the header has 2/);

  const missing = await runCli(ctx, ["run", "wf", "--inputs", "nowhere.csv", ...simFlags(ctx)]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--inputs nowhere\.csv: cannot read it: no such file \(ENOENT\)/);
  assert.equal(ctx.sim.stats().log.filter((e) => e.kind === "schedule" && e.path.includes("/wf/")).length, 0, "nothing scheduled");
});

test("an unknown workflow exits 3", async () => {
  // The simulator schedules any workflow uid; a wrong project is what it refuses.
  scratch("one.csv", "url\nhttps://a\n");
  const { code, stderr } = await runCli(ctx, ["run", "wf", "--inputs", "one.csv", "--project-id", "not-this-project", ...simFlags(ctx)]);
  assert.equal(code, 3, stderr);
  assert.match(stderr, /UNAUTHORIZED/);
});

test("the README's local session: `run` against npm start's server (simulator at /v3), inputs on stdin", async () => {
  const { startDemoServer } = await import("../../scripts/start.mjs");
  const { createSim } = await import("../../sim/index.js");
  // npm start's server and its default credentials; a shorter run than its default 20 s.
  const demo = await startDemoServer({ port: 0, sim: createSim({ defaults: { rows: 1200, durationMs: 1000 } }) });
  try {
    const input = '[{"linkedin_profile_url":"https://www.linkedin.com/in/ada"}]\n';
    const env = cliEnv({ CAPTAINDATA_API_KEY: "sim-key", CAPTAINDATA_PROJECT_ID: "sim-project" });
    const { code, stdout, stderr } = await runCli(ctx, ["run", "demo", "--inputs", "-", "--base-url", `${demo.url}v3`, "--interval", "1s"], { env, input });
    assert.equal(code, 0, stderr);
    assert.match(stderr, /scheduled run \S+ of workflow demo \(1 input\)/);
    assert.deepEqual(ndjsonIds(stdout), rowIds(1200));
  } finally {
    await demo.close();
  }
});
