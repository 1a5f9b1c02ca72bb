// Mistakes in the command line: exit 2 and a message that names the flag, file or variable at
// fault; `--help` for every command, with an example and the exit codes. No API is needed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { existsSync } from "node:fs";
import path from "node:path";
import { cliEnv, runCli, useCliSim } from "./cli-fixture.mjs";

const ctx = useCliSim();

test("--help of every command: usage and an example on stdout, exit 0; the exit codes in the top-level help only", async () => {
  for (const args of [["--help"], ["watch", "--help"], ["run", "-h"], ["status", "--help"]]) {
    const { code, stdout, stderr } = await runCli(ctx, args);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /Usage:/);
    assert.match(stdout, /Example:\n(?: {2}.*\n)*? {2}captaindata-poller (watch|run|status) /);
    const table = ["0 ", "1 ", "2 ", "3 ", "4 ", "130 "].filter((exit) => new RegExp(`^ {2}${exit}`, "m").test(stdout));
    if (args[0] === "--help") assert.equal(table.length, 6, "every exit code documented in the top-level help");
    else {
      assert.deepEqual(table, [], `${args.join(" ")}: no copy of the exit-code table`);
      assert.match(stdout, /^Exit codes: listed by captaindata-poller --help\.$/m, "a pointer to it");
    }
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
    [["watch", "job", "--interval", "0s"], {}, /--interval: the duration must be above zero \(got "0s"\)/],
    [["watch", "job", "--timeout", "0ms"], {}, /--timeout: the duration must be above zero/],
    [["watch", "job", "--timeout", "soon"], {}, /--timeout: expected a duration/],
    [["watch", "job", "--out"], {}, /--out/],
    [["watch", "job", "--base-url", "not a url"], {}, /--base-url: not a URL/],
    [["watch", "job", "--api-key-file", "absent.key"], {}, /--api-key-file absent\.key: cannot read it \(ENOENT\)/],
    [["watch", "job"], { CAPTAINDATA_API_KEY: "" }, /CAPTAINDATA_API_KEY/],
    // Behind --base-url too, the key is checked before any request, unless proxy credentials are given.
    [["watch", "job", "--base-url", "http://127.0.0.1:9/v3"], { CAPTAINDATA_API_KEY: "" }, /^captaindata-poller: no API key: set CAPTAINDATA_API_KEY or pass --api-key-file FILE; through a proxy .*--read-token TOKEN/m],
    [["status", "job", "--read-token", "tok-123456"], { CAPTAINDATA_API_KEY: "" }, /--read-token: a read token is for the worker .*--base-url/],
    [["watch", "job", "--base-url", "https://api.captaindata.co/v3", "--header", "x-trace: t-1"], { CAPTAINDATA_API_KEY: "" }, /^captaindata-poller: no API key: set CAPTAINDATA_API_KEY or pass --api-key-file FILE$/m],
    [["watch", "job", "--base-url", "http://127.0.0.1:9/v3", "--header", "x-no-colon"], {}, /--header: expected "name: value"/],
    [["watch", "job", "--base-url", "http://127.0.0.1:9/v3", "--header", "bad name: secret-value-1"], {}, /--header: expected "name: value".*not a header name/],
    // A base URL without its version segment: refused before any request, with the fix.
    [["watch", "job", "--base-url", "http://127.0.0.1:8080"], {}, /--base-url http:\/\/127\.0\.0\.1:8080\/: the path has no API version; .*e\.g\. http:\/\/127\.0\.0\.1:8080\/v3$/m],
    [["status", "job", "--base-url", "https://proxy.example/captaindata/"], {}, /e\.g\. https:\/\/proxy\.example\/captaindata\/v3/],
    [["watch", "job"], { CAPTAINDATA_PROJECT_ID: "" }, /CAPTAINDATA_PROJECT_ID/],
    [["run", "wf"], {}, /run: --inputs FILE is required/],
    [["watch", "job", "--base-url", "http://127.0.0.1:9/v3", "--state", "no/such/dir/s.json"], {}, /--state no\/such\/dir\/s\.json: the directory .*no\/such\/dir does not exist/],
    // The package's own TypeErrors for options are reported with the flag that set them, in flag words.
    [["watch", "job", "--base-url", "https://api.example.com/v3", "--interval", "500ms", "--out", "never.ndjson"], {}, /^captaindata-poller: --interval: expected at least 1000 ms against a remote API \(less only for a --base-url on localhost/m],
    [["watch", "job", "--base-url", "ftp://api.example.com/v3"], {}, /^captaindata-poller: --base-url: expected an https URL/m],
    [["watch", "job", "--base-url", "http://127.0.0.1:9/v3", "--cursor", "garbage"], {}, /^captaindata-poller: --cursor \/ --state: expected a cursor as a resume command prints it/m],
  ];
  for (const [args, env, message] of cases) {
    const { code, stdout, stderr } = await runCli(ctx, args, { env: cliEnv(env) });
    assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
    assert.match(stderr, message, args.join(" "));
    assert.doesNotMatch(stderr, /\b(baseUrl|intervalMs|maxDurationMs|apiKey|projectId)\b/, `${args.join(" ")}: the library's option names`);
    assert.ok(!stderr.includes("secret-value-1"), "a header value is never printed");
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

