// Mistakes in the command line: exit 2 and a message that names the flag, file or variable at
// fault; `--help` for every command, with an example and the exit codes. No API is needed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { existsSync } from "node:fs";
import path from "node:path";
import { cliEnv, runCli, useCliSim } from "./cli-fixture.mjs";

const ctx = useCliSim();

test("--help of every command: usage, an example, the exit codes; on stdout, exit 0", async () => {
  for (const args of [["--help"], ["watch", "--help"], ["run", "-h"], ["status", "--help"]]) {
    const { code, stdout, stderr } = await runCli(ctx, args);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /Usage:/);
    assert.match(stdout, /Example:\n(?: {2}.*\n)*? {2}captaindata-poller (watch|run|status) /);
    for (const exit of ["0 ", "1 ", "2 ", "3 ", "4 ", "130 "]) assert.match(stdout, new RegExp(`^ {2}${exit}`, "m"), `exit ${exit} documented in ${args}`);
  }
});

test("usage errors exit 2 and name what is at fault", async () => {
  const cases = [
    [["frobnicate"], {}, /unknown command "frobnicate"/],
    [["watch"], {}, /watch: missing <jobUid>/],
    [["watch", "a", "b"], {}, /one <jobUid> expected/],
    [["watch", "job", "--colour"], {}, /watch: unknown flag --colour\nUsage: captaindata-poller watch/],
    [["watch", "job", "--formt", "csv"], {}, /unknown flag --formt; did you mean --format\?/],
    [["wach", "job"], {}, /unknown command "wach"; did you mean watch\?\nUsage:\n/],
    [["--bogus"], {}, /--bogus: a command \(watch, run or status\) comes first/],
    [["watch", "job", "--out", "--state", "s.json"], {}, /--out needs a value, and the next word is a flag/],
    [["watch", "job", "--quiet=yes"], {}, /--quiet takes no value/],
    [["watch", "job", "--format", "cvs"], {}, /did you mean csv\?/],
    [["watch", "job", "--format", "xml"], {}, /--format: expected ndjson, csv, json \(got "xml"\)/],
    [["watch", "job", "--interval", "10"], {}, /--interval: .*\(got "10"\): add a unit/],
    [["watch", "job", "--timeout", "soon"], {}, /--timeout: expected a duration/],
    [["watch", "job", "--out"], {}, /--out/],
    [["watch", "job", "--base-url", "not a url"], {}, /--base-url: not a URL/],
    [["watch", "job", "--api-key-file", "absent.key"], {}, /--api-key-file absent\.key: cannot read it \(ENOENT\)/],
    [["watch", "job"], { CAPTAINDATA_API_KEY: "" }, /CAPTAINDATA_API_KEY/],
    [["watch", "job"], { CAPTAINDATA_PROJECT_ID: "" }, /CAPTAINDATA_PROJECT_ID/],
    [["run", "wf"], {}, /run: --inputs FILE is required/],
    [["watch", "job", "--base-url", "http://127.0.0.1:9/v3", "--state", "no/such/dir/s.json"], {}, /--state no\/such\/dir\/s\.json: the directory .*no\/such\/dir does not exist/],
    // The package's own TypeErrors for options are reported with the flag that set them.
    [["watch", "job", "--base-url", "https://api.example.com/v3", "--interval", "500ms", "--out", "never.ndjson"], {}, /^captaindata-poller: --interval: .*`intervalMs`.* at least 1000 ms/m],
    [["watch", "job", "--base-url", "ftp://api.example.com/v3"], {}, /^captaindata-poller: --base-url: .*`baseUrl`/m],
  ];
  for (const [args, env, message] of cases) {
    const { code, stdout, stderr } = await runCli(ctx, args, { env: cliEnv(env) });
    assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
    assert.match(stderr, message, args.join(" "));
    assert.equal(stdout, "", "nothing on stdout");
  }
  assert.ok(!existsSync(path.join(ctx.dir, "never.ndjson")), "a refused command creates no --out file");
});

test("a --state file of another run is refused before any request", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 5, durationMs: 0 });
  const flags = ["--base-url", ctx.baseUrl, "--interval", "200ms", "--state", "other.state.json"];
  assert.equal((await runCli(ctx, ["watch", jobUid, ...flags])).code, 0);
  const requests = ctx.sim.stats().requests.total;
  const other = await runCli(ctx, ["watch", "another-run", ...flags]);
  assert.equal(other.code, 2);
  assert.match(other.stderr, new RegExp(`--state other\\.state\\.json follows run ${jobUid}, not another-run`));
  const format = await runCli(ctx, ["watch", jobUid, ...flags, "--format", "csv"]);
  assert.equal(format.code, 2);
  assert.match(format.stderr, /--format csv: --state other\.state\.json was written with --format ndjson/);
  assert.equal(ctx.sim.stats().requests.total, requests, "no request sent");
});

test("status: one read, printed for a person or as JSON; an unknown run exits 3", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 40, durationMs: 0 });
  const before = ctx.sim.stats().requests.total;
  const human = await runCli(ctx, ["status", jobUid, "--base-url", ctx.baseUrl]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`^run ${jobUid}\n {2}status {4}finished\n`));
  assert.match(human.stdout, /rows {6}40/);
  assert.equal(ctx.sim.stats().requests.total - before, 1, "one request");
  const json = await runCli(ctx, ["status", jobUid, "--json", "--base-url", ctx.baseUrl]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(
    (({ status, rowCount, uid }) => ({ status, rowCount, uid }))(JSON.parse(json.stdout)),
    { status: "finished", rowCount: 40, uid: jobUid },
  );
  const unknown = await runCli(ctx, ["status", "no-such-run", "--base-url", ctx.baseUrl]);
  assert.equal(unknown.code, 3);
  assert.match(unknown.stderr, /NOT_FOUND/);
});

test("--help and -h anywhere, help <command>, --version anywhere: exit 0 on stdout; no command: the help on stderr, exit 2", async () => {
  for (const [args, usage] of [
    [["watch", "job", "--out", "x.ndjson", "--help"], /^Usage: captaindata-poller watch /],
    [["watch", "--colour", "-h"], /^Usage: captaindata-poller watch /],
    [["--help", "run"], /^Usage: captaindata-poller run /],
    [["help", "status"], /^Usage: captaindata-poller status /],
    [["frobnicate", "--help"], /^captaindata-poller: watch a Captain Data run/],
  ]) {
    const { code, stdout, stderr } = await runCli(ctx, args);
    assert.equal(code, 0, `${args.join(" ")}: ${stderr}`);
    assert.match(stdout, usage, args.join(" "));
  }
  const version = await runCli(ctx, ["status", "job", "--version"]);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  const none = await runCli(ctx, []);
  assert.equal(none.code, 2);
  assert.equal(none.stdout, "", "stdout stays for rows");
  assert.match(none.stderr, /^Usage:/m);
  // `--` ends the flags: a job uid that looks like --help is a job uid.
  const literal = await runCli(ctx, ["status", "--base-url", ctx.baseUrl, "--", "--help"]);
  assert.notEqual(literal.code, 0);
  assert.doesNotMatch(literal.stdout, /Usage:/);
});

test("status --exit-status: 0 succeeded, 1 failed, 5 not ended yet; without it, 0 whatever the run's state", async () => {
  const cases = [
    [{ rows: 5, durationMs: 0 }, 0],
    [{ rows: 5, durationMs: 0, outcome: "warning" }, 0],
    [{ rows: 5, durationMs: 0, outcome: "shutdown" }, 1],
    [{ rows: 5, durationMs: 0, outcome: "allInputsFailed" }, 1],
    [{ rows: 5, durationMs: 600_000 }, 5],
  ];
  for (const [spec, expected] of cases) {
    const { jobUid } = ctx.sim.createJob(spec);
    const strict = await runCli(ctx, ["status", jobUid, "--exit-status", "--base-url", ctx.baseUrl]);
    assert.equal(strict.code, expected, `${JSON.stringify(spec)}: ${strict.stdout}${strict.stderr}`);
    assert.match(strict.stdout, new RegExp(`^run ${jobUid}\n`), "the run is printed either way");
    const plain = await runCli(ctx, ["status", jobUid, "--base-url", ctx.baseUrl]);
    assert.equal(plain.code, 0, plain.stderr);
  }
  const unknown = await runCli(ctx, ["status", "no-such-run", "--exit-status", "--base-url", ctx.baseUrl]);
  assert.equal(unknown.code, 3);
});

