// The README's terminal lines, run as written. examples/cli/simulator.sh: `npm start` in the
// repository, then the `npx captaindata-poller run …` line in an app that installed the package,
// on 127.0.0.1:8080 exactly as the README says: inside a network namespace of its own (its own
// loopback, no route out), so neither another test's port 8080 nor the network is in the way.
// examples/cli/watch.sh names no server at all (the real API, no --base-url): in a namespace of
// its own too, where api.captaindata.co is 127.0.0.1 (/etc/hosts, in a mount namespace) and the
// simulator answers HTTPS there with a certificate the CLI is told to trust (NODE_EXTRA_CA_CERTS).
// Only the placeholders a user fills in change: the key, the project, a job and a workflow.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { DEFAULTS } from "captaindata-poller/rules";
import { root } from "../../scripts/exec.mjs";
import { exampleDir } from "./example-fixture.mjs";

/** Runs `script` with bash in a new network namespace (`mount`: and a mount namespace); resolves with its exit code and output. */
function inNetworkNamespace(script, { cwd, env = {}, mount = false }) {
  return new Promise((resolve, reject) => {
    const spaces = mount ? ["--net", "--mount"] : ["--net"];
    const child = spawn("unshare", [...spaces, "bash", "-c", script], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("examples/cli/simulator.sh as written: npm start, then the CLI runs a simulated run and prints its rows", async (t) => {
  const [serverLine, cliLine, ...rest] = readFileSync(path.join(root, "examples", "cli", "simulator.sh"), "utf8").trimEnd().split("\n");
  assert.deepEqual(rest, [], "two lines");
  assert.match(serverLine, /^npm start\b/);
  const app = exampleDir("cli");
  t.after(() => app.remove());
  // What `npm install captaindata-poller` leaves for npx: the package and its bin.
  const { bin } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const bins = path.join(app.dir, "node_modules", ".bin");
  const driver = [
    "set -um", // job control: the background server gets a process group of its own, ended on exit
    "ip link set lo up",
    // Line 1 in the repository, in the background (the README: "in another terminal").
    "(",
    'cd "$ROOT"',
    serverLine,
    ') > "$APP/server.log" 2>&1 &',
    "server=$!",
    "trap 'kill -- -$server 2>/dev/null' EXIT",
    // Bounded wait for the demo server (the condition, not a duration): at most 120 s.
    "for i in $(seq 1 1200); do curl -sf -o /dev/null http://127.0.0.1:8080/ && break; sleep 0.1; done",
    'curl -sf -o /dev/null http://127.0.0.1:8080/ || { cat "$APP/server.log" >&2; exit 90; }',
    // Line 2 in the app, as written.
    `cd "$APP" && mkdir -p "${bins}" && ln -sf "$ROOT/${bin["captaindata-poller"]}" "${bins}/captaindata-poller"`,
    cliLine,
  ].join("\n");
  writeFileSync(path.join(app.dir, "driver.sh"), driver);
  const out = await inNetworkNamespace(driver, { cwd: app.dir, env: { ROOT: root, APP: app.dir, npm_config_offline: "true" } });
  assert.equal(out.code, 0, `${out.stderr.slice(-2000)}`);
  const rows = out.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.ok(rows.length > 0, "rows on stdout");
  assert.deepEqual(rows.map((r) => r.id), rows.map((_, i) => `row-${i}`), "NDJSON, every row once, in order");
  assert.ok(!out.stdout.includes("sim-key") && !out.stderr.includes("sim-key"), "the key is never printed");
});

/** The host of the package's default baseUrl (api.captaindata.co), where the CLI goes without --base-url. */
const API_HOST = new URL(DEFAULTS.baseUrl).hostname;
const SIM_KEY = "sk_test_watch_example_R8n4";
const SIM_PROJECT = "sim-project-watch";

/**
 * examples/cli/watch.sh with its placeholders filled in as a user fills them: the key and the
 * project, `<jobUid>` (the shell variable JOB, the run the simulator made) and `<workflowUid>`.
 * Everything else stays as written; the lines come back one by one.
 */
function watchExample() {
  const text = readFileSync(path.join(root, "examples", "cli", "watch.sh"), "utf8");
  const lines = text
    .replace("CAPTAINDATA_API_KEY=…", `CAPTAINDATA_API_KEY=${SIM_KEY}`)
    .replace("CAPTAINDATA_PROJECT_ID=…", `CAPTAINDATA_PROJECT_ID=${SIM_PROJECT}`)
    .replaceAll("<jobUid>", '"$JOB"')
    .replaceAll("<workflowUid>", "wf-leads")
    .trimEnd()
    .split("\n");
  assert.ok(!lines.some((l) => /…|<\w+>/.test(l)), `a placeholder left: ${lines.join("\n")}`);
  const [exportLine, watch, run, status, ...rest] = lines;
  assert.deepEqual(rest, [], "four lines");
  assert.match(exportLine, /^export CAPTAINDATA_API_KEY=\S+ CAPTAINDATA_PROJECT_ID=\S+$/);
  assert.match(watch, /^npx captaindata-poller watch "\$JOB" --out rows\.ndjson --state rows\.state\.json$/);
  assert.match(run, /^npx captaindata-poller run wf-leads --inputs profiles\.csv --format csv > leads\.csv$/);
  assert.match(status, /^npx captaindata-poller status "\$JOB" --json$/);
  return { exportLine, watch, run, status };
}

/**
 * An app folder where `npx captaindata-poller` is the installed package, a key and certificate
 * for api.captaindata.co, the hosts file that sends that name to loopback, the user's
 * profiles.csv, and sim.mjs: the simulator on 127.0.0.1:443 (HTTPS), with one run created
 * (`job`: its spec) whose uid it writes to the file `job`.
 */
function watchApp(job) {
  const app = exampleDir("cli-watch");
  const { bin } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const bins = path.join(app.dir, "node_modules", ".bin");
  mkdirSync(bins, { recursive: true });
  symlinkSync(path.join(root, bin["captaindata-poller"]), path.join(bins, "captaindata-poller"));
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${API_HOST}`, "-addext", `subjectAltName=DNS:${API_HOST}`, "-keyout", "key.pem", "-out", "cert.pem"], { cwd: app.dir, stdio: "ignore" });
  writeFileSync(path.join(app.dir, "hosts"), `127.0.0.1 localhost\n127.0.0.1 ${API_HOST}\n`);
  writeFileSync(path.join(app.dir, "profiles.csv"), "linkedin_profile_url\nhttps://www.linkedin.com/in/ada\nhttps://www.linkedin.com/in/grace\n");
  const sim = `import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { startSimServer } from ${JSON.stringify(pathToFileURL(path.join(root, "sim", "server.mjs")).href)};
const server = await startSimServer({
  port: 443,
  tls: { key: readFileSync("key.pem"), cert: readFileSync("cert.pem") },
  apiKey: ${JSON.stringify(SIM_KEY)},
  projectId: ${JSON.stringify(SIM_PROJECT)},
  seed: 24,
  defaults: { rows: 1500, durationMs: 1500 }, // the run that \`run\` launches
});
writeFileSync("job", server.sim.createJob(${JSON.stringify(job)}).jobUid);
`;
  writeFileSync(path.join(app.dir, "sim.mjs"), sim);
  return app;
}

/** The driver's start: loopback up, the hosts file in place, the simulator up (a bounded wait for its run), JOB set. */
const SIMULATED_API = [
  "set -um", // job control: background jobs get process groups of their own (Ctrl-C reaches one), ended on exit
  "ip link set lo up",
  'mount --bind "$APP/hosts" /etc/hosts',
  'node sim.mjs > sim.log 2>&1 &',
  "sim=$!",
  "trap 'kill -- -$sim 2>/dev/null' EXIT",
  // Bounded wait for the simulator (the condition, not a duration): at most 60 s.
  "for i in $(seq 1 600); do [ -s job ] && break; sleep 0.1; done",
  '[ -s job ] || { cat sim.log >&2; exit 90; }',
  "JOB=$(cat job)",
  'export NODE_EXTRA_CA_CERTS="$APP/cert.pem"', // the user's machine trusts api.captaindata.co's certificate
];

/** The rows of an NDJSON file. */
const ndjson = (file) => readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));
const rowIds = (n) => Array.from({ length: n }, (_, i) => `row-${i}`);

test("examples/cli/watch.sh as written, against the simulated api.captaindata.co: watch writes every row once, run prints the new run's rows as CSV, status prints the run as JSON", async (t) => {
  const { exportLine, watch, run, status } = watchExample();
  const app = watchApp({ rows: 2500, durationMs: 0 });
  t.after(() => app.remove());
  // Each line as typed at a prompt; its exit code noted as a user sees it ($?).
  const typed = (line, name) => [line, `echo $? > ${name}.code`];
  const driver = [...SIMULATED_API, exportLine, ...typed(watch, "watch"), ...typed(run, "run"), ...typed(status, "status")].join("\n");
  writeFileSync(path.join(app.dir, "driver.sh"), driver);
  const out = await inNetworkNamespace(driver, { cwd: app.dir, mount: true, env: { APP: app.dir, npm_config_offline: "true" } });
  const at = (file) => path.join(app.dir, file);
  const code = (name) => Number(readFileSync(at(`${name}.code`), "utf8"));
  assert.equal(out.code, 0, out.stderr.slice(-2000));
  assert.deepEqual([code("watch"), code("run"), code("status")], [0, 0, 0], out.stderr.slice(-2000));

  // watch: every row of the run once, in order, in rows.ndjson; the state file says where it ended.
  assert.deepEqual(ndjson(at("rows.ndjson")).map((r) => r.id), rowIds(2500), "rows.ndjson: every row once, in order");
  const job = readFileSync(at("job"), "utf8");
  const state = JSON.parse(readFileSync(at("rows.state.json"), "utf8"));
  assert.deepEqual([state.jobUid, state.rows, state.done], [job, 2500, true], "the state file: this run, 2500 rows, over");

  // run: the launched run's rows as CSV on stdout (into leads.csv), a header then each row once.
  const [header, ...lines] = readFileSync(at("leads.csv"), "utf8").trim().split(/\r?\n/);
  const idColumn = header.split(",").indexOf("id");
  assert.ok(idColumn >= 0, `a CSV header naming the fields: ${header}`);
  assert.deepEqual(lines.map((l) => l.split(",")[idColumn]), rowIds(1500), "leads.csv: every row once, in order");

  // status --json: what the terminal shows (the only line that writes to it): the watched run, over.
  const shown = JSON.parse(out.stdout);
  assert.equal(shown.status, "finished");
  assert.equal(shown.rowCount, 2500);
  assert.ok(![out.stdout, out.stderr, readFileSync(at("leads.csv"), "utf8"), readFileSync(at("rows.ndjson"), "utf8")].some((text) => text.includes(SIM_KEY)), "the key is never printed");
});

test("examples/cli/watch.sh's watch line: Ctrl-C, then the same command again, goes on where it stopped (every row once)", async (t) => {
  const { exportLine, watch } = watchExample();
  // A run that goes on until the test ends it, so the first watch is still at work when it is interrupted.
  const app = watchApp({ rows: 6000, durationMs: 600_000 });
  t.after(() => app.remove());
  const finish = `curl -sf --cacert "$APP/cert.pem" -X POST "https://${API_HOST}/__sim/jobs/$JOB/finish" > /dev/null`;
  const driver = [
    ...SIMULATED_API,
    exportLine,
    // The command in the background, its own process group: a terminal's Ctrl-C signals the foreground group.
    `${watch} 2> first.err &`,
    "first=$!",
    // Bounded wait (at most 60 s) for its first rows on disk, then Ctrl-C.
    "for i in $(seq 1 600); do [ -s rows.ndjson ] && break; sleep 0.1; done",
    "[ -s rows.ndjson ] || { cat first.err >&2; exit 91; }",
    'kill -INT -- "-$first"',
    'wait "$first"; echo $? > first.code',
    "wc -l < rows.ndjson > first.rows",
    finish, // the run ends while no one watches
    // The same command again.
    `${watch} 2> second.err`,
    "echo $? > second.code",
  ].join("\n");
  writeFileSync(path.join(app.dir, "driver.sh"), driver);
  const out = await inNetworkNamespace(driver, { cwd: app.dir, mount: true, env: { APP: app.dir, npm_config_offline: "true" } });
  const at = (file) => path.join(app.dir, file);
  const read = (file) => readFileSync(at(file), "utf8").trim();
  assert.equal(out.code, 0, out.stderr.slice(-2000));
  const firstRows = Number(read("first.rows"));
  assert.ok(firstRows > 0 && firstRows < 6000, `the first watch stopped part way (${firstRows} rows)`);
  assert.equal(Number(read("first.code")), 130, `Ctrl-C: exit 130 (${read("first.err").slice(-500)})`);
  // What the interrupted command told the user: the same command, to go on.
  assert.ok(read("first.err").includes(watch.replace('"$JOB"', read("job"))), `the resume command is the watch line: ${read("first.err")}`);
  assert.equal(Number(read("second.code")), 0, read("second.err").slice(-1000));
  assert.deepEqual(ndjson(at("rows.ndjson")).map((r) => r.id), rowIds(6000), "every row once, in order, across the interruption");
});
