// `run <action> --v4` (issue 37, point 3): the CLI launches a v4 run through the worker (workerd,
// in front of the v4 simulator) with the admin token of CAPTAINDATA_ADMIN_TOKEN, then watches it
// through the worker's /v3 with the launch's read token: every row once and exit 0; every replay
// lost: exit 6, the batches named, never "finished". Bad input is refused before anything is
// launched, naming the flag, the variable or the file. Neither token is ever printed.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import path from "node:path";
import { after, before, test } from "node:test";
import { EXIT } from "../../bin/exit-codes.mjs";
import { manualClock } from "../../sim/index.js";
import { advance, startV4Worker } from "../worker/v4-fixture.mjs";
import { API_KEY, SECRETS, rowIds } from "../worker/worker-fixture.mjs";
import { cliEnv, ndjsonIds, readScratch, spawnCli } from "./cli-fixture.mjs";

const ACTION = "linkedin-extract-people";
const ADMIN_TOKEN = SECRETS.ADMIN_TOKEN;
const ctx = { texts: [], children: new Set() };
const clock = manualClock(Date.now());
let w;
before(async () => {
  ctx.dir = mkdtempSync(path.join(tmpdir(), "cdp-cli-v4-"));
  writeFileSync(path.join(ctx.dir, "inputs.json"), JSON.stringify([{ linkedin_profile_url: "https://www.linkedin.com/in/a" }, { linkedin_profile_url: "https://www.linkedin.com/in/b" }]));
  w = await startV4Worker({ clock, settings: { V4_STATUS_INTERVAL_MS: "200", V4_RECHECK_MS: "50" } });
});
after(async () => {
  for (const child of ctx.children) child.kill("SIGKILL");
  // Closed first: a failed audit must not leave workerd keeping the suite alive.
  await w?.close();
  rmSync(ctx.dir, { recursive: true, force: true });
  // No secret in anything the CLI printed or wrote: the admin token, a read token, the key.
  const tokens = [...answeredTokens];
  for (const { where, text } of ctx.texts) {
    for (const [what, secret] of [["the admin token", ADMIN_TOKEN], ["the API key", API_KEY], ...tokens.map((epoch) => ["a read token (its run's epoch)", epoch])]) {
      assert.ok(!text.includes(secret), `${what} appears in ${where}`);
    }
  }
});

/**
 * The token epochs of the runs the CLI launched, from a read token the test asks of the worker's
 * /track: every read token of a run (the launch's too) holds its epoch, so no output may.
 */
const answeredTokens = new Set();

/** A user with the worker's admin token and no API key: the worker holds it. */
const env = (extra = {}) => cliEnv({ CAPTAINDATA_API_KEY: "", CAPTAINDATA_PROJECT_ID: "", CAPTAINDATA_ADMIN_TOKEN: ADMIN_TOKEN, ...extra });
const launches = () => w.sim.stats().requests["v4-launch"] ?? 0;

/**
 * Runs the CLI to its end while the simulated clock moves on (the callbacks it makes due are
 * sent to the worker): `{ code, stdout, stderr }`.
 */
async function runWhileTimePasses(args, { meanwhile, ...options } = {}) {
  const out = spawnCli(ctx, args, { env: env(), ...options });
  let exited = false;
  const exit = out.exit.then((result) => {
    exited = true;
    return result;
  });
  while (!exited) {
    await advance(w, clock, 500, 500);
    // `meanwhile(out)`: what the test does once what the CLI wrote says so (e.g. a Ctrl-C).
    meanwhile?.(out);
    await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 25))]);
  }
  const { code } = await exit;
  return { code, stdout: out.stdout, stderr: out.stderr };
}

/** A port on 127.0.0.1 nothing listens on (just closed). */
function closedPort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** The run uid the CLI printed on stderr. */
const launchedUid = (stderr) => /launched v4 run (\S+) of action/.exec(stderr)?.[1];

/** Keeps the read token of every run the CLI launched, for the audit (the test reads it as the worker's admin). */
async function rememberToken(runUid) {
  const res = await w.call(`/v3/jobs/${runUid}/track`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, body: "{}" });
  if (res.body?.read_token) answeredTokens.add(res.body.read_token.split(".")[2]);
  return res.body?.read_token;
}

test("run --v4: launched through the worker, every row once on stdout, exit 0, the run uid on stderr", { timeout: 120_000 }, async () => {
  w.sim.v4.setDefaults({ rows: 35, pageSize: 10, durationMs: 3000 });
  const before = launches();
  const { code, stdout, stderr } = await runWhileTimePasses(["run", ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin, "--interval", "100ms"]);
  assert.equal(code, EXIT.OK, stderr);
  assert.deepEqual(ndjsonIds(stdout), rowIds(35), "every row once, in order");
  const runUid = launchedUid(stderr);
  assert.ok(runUid, stderr);
  const token = await rememberToken(runUid);
  assert.match(stderr, new RegExp(`launched v4 run ${runUid} of action ${ACTION} \\(2 inputs\\) through the worker at ${w.origin.replace(/\./g, "\\.")}`));
  assert.match(stderr, /done: run finished, 35 rows/);
  assert.equal(launches(), before + 1, "one launch");
  assert.equal((await w.run(runUid, token)).body.number_inputs, 2, "the file's 2 inputs were sent");
  console.log(`run --v4 stderr:\n${stderr}`);
  w.sim.v4.setDefaults({});
});

test("run --v4 with every callback and every replay lost: exit 6, the missing batches named, nothing reported finished", { timeout: 120_000 }, async () => {
  w.sim.v4.setDefaults({ rows: 60, pageSize: 10, durationMs: 2000, faults: { lostRate: 1, replayLostRate: 1 } });
  const { code, stdout, stderr } = await runWhileTimePasses(["run", ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin, "--interval", "100ms", "--out", "lost.ndjson"]);
  assert.equal(code, EXIT.ROWS_MISSING, stderr);
  const runUid = launchedUid(stderr);
  await rememberToken(runUid);
  const batches = w.sim.v4.run(runUid).batches.map((b) => b.batchUid);
  assert.equal(batches.length, 7);
  assert.match(stderr, new RegExp(`incomplete: the run ended with rows missing \\(ROWS_MISSING\\): rows unknown in number in 7 batches: ${batches.slice(0, 5).join(", ")} and 2 more; 0 rows written to lost\\.ndjson`));
  assert.doesNotMatch(stderr, /finished|done:/, "never reported as finished");
  assert.equal(stdout, "");
  assert.equal(readScratch(ctx, "lost.ndjson"), "");
  console.log(`run --v4, every replay lost, stderr:\n${stderr}`);
  w.sim.v4.setDefaults({});
});

test("run --v4 --state: the same command again continues the run it launched, with no row twice and no second launch", { timeout: 120_000 }, async () => {
  w.sim.v4.setDefaults({ rows: 20, pageSize: 10, durationMs: 1000 });
  const args = ["run", ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin, "--interval", "100ms", "--out", "kept.ndjson", "--state", "kept.state.json"];
  const first = await runWhileTimePasses(args);
  assert.equal(first.code, EXIT.OK, first.stderr);
  await rememberToken(launchedUid(first.stderr));
  const before = launches();
  const again = await runWhileTimePasses(args);
  assert.equal(again.code, EXIT.OK, again.stderr);
  assert.match(again.stderr, /v4 run \S+ \(launched earlier, from --state kept\.state\.json\): continuing it; no new run is launched/);
  assert.equal(launches(), before, "no second launch");
  // Every row once, in any order: batches are stored in the order their callbacks arrive (worker README).
  assert.deepEqual(ndjsonIds(readScratch(ctx, "kept.ndjson")).sort(), rowIds(20).sort(), "every row once");
  // A v3 run cannot take the v4 state over, nor the reverse.
  const v3 = await runWhileTimePasses(["run", "wf-1", "--inputs", "inputs.json", "--state", "kept.state.json"], { env: env({ CAPTAINDATA_API_KEY: API_KEY, CAPTAINDATA_PROJECT_ID: "p" }) });
  assert.equal(v3.code, EXIT.USAGE, v3.stderr);
  assert.match(v3.stderr, /--state kept\.state\.json follows v4 run \S+ of action linkedin-extract-people: add --v4/);
  w.sim.v4.setDefaults({});
});

test("run --v4 refuses before any launch: no admin token, no --base-url, a bad inputs file, a bad action, a flag it cannot use", async () => {
  const before = launches();
  const cases = [
    [[ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin], env({ CAPTAINDATA_ADMIN_TOKEN: "" }), /run --v4: CAPTAINDATA_ADMIN_TOKEN is not set: the worker's admin token/],
    [[ACTION, "--v4", "--inputs", "inputs.json"], env(), /run --v4: --base-url is required: the origin of the project's worker/],
    [[ACTION, "--v4", "--base-url", w.origin], env(), /run --v4: --inputs FILE is required/],
    [[ACTION, "--v4", "--inputs", "missing.json", "--base-url", w.origin], env(), /--inputs missing\.json: cannot read it/],
    [[ACTION, "--v4", "--inputs", "broken.json", "--base-url", w.origin], env(), /--inputs broken\.json: not valid JSON/],
    [[ACTION, "--v4", "--inputs", "empty.json", "--base-url", w.origin], env(), /--inputs empty\.json: the array is empty: no inputs to schedule/],
    [["no such action", "--v4", "--inputs", "inputs.json", "--base-url", w.origin], env(), /run --v4: "no such action" is not an action name/],
    [[ACTION, "--v4", "--inputs", "inputs.json", "--base-url", `${w.origin}/somewhere`], env(), /--base-url http:\/\/127\.0\.0\.1:\d+\/somewhere: with --v4, the worker's origin without a path/],
    [[ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin, "--read-token", "x"], env(), /run --v4: --read-token is not used with --v4 \(the launch answers the run's read token\)/],
    [[ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin, "--steps", "s.json"], env(), /run --v4: --steps is not used with --v4/],
  ];
  writeFileSync(path.join(ctx.dir, "broken.json"), "[{");
  writeFileSync(path.join(ctx.dir, "empty.json"), "[]");
  for (const [args, withEnv, expected] of cases) {
    const { code, stderr } = await runWhileTimePasses(["run", ...args], { env: withEnv });
    assert.equal(code, EXIT.USAGE, `${args.join(" ")}: ${stderr}`);
    assert.match(stderr, expected, args.join(" "));
  }
  assert.equal(launches(), before, "nothing launched");
});

test("run --v4 refused by the worker: a wrong admin token exits 3 naming CAPTAINDATA_ADMIN_TOKEN; inputs Captain Data refuses exit 2 naming --inputs", async () => {
  const wrong = await runWhileTimePasses(["run", ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin], { env: env({ CAPTAINDATA_ADMIN_TOKEN: "not-the-admin-token" }) });
  assert.equal(wrong.code, EXIT.ACCESS, wrong.stderr);
  assert.match(wrong.stderr, /error: launching v4 action linkedin-extract-people through --base-url \S+ failed: Not authorized \(HTTP 401\): the worker refused the admin token: check CAPTAINDATA_ADMIN_TOKEN/);
  assert.ok(!wrong.stderr.includes("not-the-admin-token"), "the token is not printed");

  const previous = w.hooks.intercept;
  w.hooks.intercept = (request) =>
    request.url.includes("/v4/actions/") ? Response.json({ error_label: "BAD_REQUEST", message: "`linkedin_profile_url` must be a LinkedIn URL" }, { status: 400 }) : previous?.(request);
  try {
    const refused = await runWhileTimePasses(["run", ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin]);
    assert.equal(refused.code, EXIT.USAGE, refused.stderr);
    assert.match(refused.stderr, /failed: BAD_REQUEST: `linkedin_profile_url` must be a LinkedIn URL \(HTTP 400\): check --inputs inputs\.json and <action> "linkedin-extract-people"; nothing was launched/);
  } finally {
    w.hooks.intercept = previous;
  }
  // Nothing listens there: said at once, not retried (a retry could launch the run twice).
  const port = await closedPort();
  const closed = await runWhileTimePasses(["run", ACTION, "--v4", "--inputs", "inputs.json", "--base-url", `http://127.0.0.1:${port}`]);
  assert.equal(closed.code, EXIT.GAVE_UP, closed.stderr);
  assert.ok(closed.stderr.includes(`connection refused to 127.0.0.1:${port} (--base-url http://127.0.0.1:${port}): is the worker running there? Not retried`), closed.stderr);
});

test("run --v4 interrupted: exit 130, the watch command that resumes (the worker's /v3, the cursor), and how to get a read token again", { timeout: 120_000 }, async () => {
  w.sim.v4.setDefaults({ rows: 2000, pageSize: 10, durationMs: 600_000 });
  let sent = false;
  const { code, stdout, stderr } = await runWhileTimePasses(["run", ACTION, "--v4", "--inputs", "inputs.json", "--base-url", w.origin, "--interval", "100ms"], {
    meanwhile(out) {
      if (!sent && out.stdout.includes("\n")) {
        sent = true;
        out.child.kill("SIGINT");
      }
    },
  });
  assert.equal(code, EXIT.INTERRUPTED, stderr);
  const runUid = launchedUid(stderr);
  await rememberToken(runUid);
  const written = ndjsonIds(stdout);
  assert.deepEqual(written, rowIds(written.length), "the rows written, each once");
  assert.match(stderr, new RegExp(`To resume:\\n  node \\S+ watch ${runUid} --base-url ${w.origin.replace(/\./g, "\\.")}/v3 --interval 100ms --cursor \\S+`));
  assert.ok(stderr.includes(`the read token: the launch's is not printed; POST /v3/jobs/${runUid}/track to the worker with its admin token gives one: set it as CAPTAINDATA_READ_TOKEN`), stderr);
  console.log(`run --v4 interrupted, stderr:\n${stderr}`);
  w.sim.v4.setDefaults({});
});

test("--help, the README and package.json say v3 and v4: run --v4, CAPTAINDATA_ADMIN_TOKEN", async () => {
  const { code, stdout } = await runWhileTimePasses(["run", "--help"]);
  assert.equal(code, EXIT.OK);
  for (const said of ["run <action> --v4 --inputs FILE --base-url <worker origin>", "CAPTAINDATA_ADMIN_TOKEN", "/v4/actions/<action>/async"]) assert.ok(stdout.includes(said), said);
  const { readFileSync } = await import("node:fs");
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  assert.match(pkg.description, /v3 and v4 runs/);
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  assert.ok(readme.includes("**`run <action> --v4`**"), "the README's CLI section");
});
