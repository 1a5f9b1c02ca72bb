// Issue 37's "Done when", as a user meets it: `npm run worker:dev` started as its own process
// (free ports, the v4 settings in its environment), the v4 launch command it prints run as
// printed (`sh -c`), and the run watched with the CLI through the worker; then the CLI's own v4
// launch line it prints (`run … --v4`), run as printed too. Each way: every row once, exit 0; with
// callbacks lost and every replay lost too, the incomplete outcome (ROWS_MISSING, exit 6, the lost
// batches named, nothing reported finished).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { until } from "../support/until.mjs";
import { freePort } from "../support/free-port.mjs";

const CLI = path.join(root, "bin", "captaindata-poller.mjs");
/** A bound for a broken start only (worker:dev bundles the worker first). */
const START_TIMEOUT_MS = 120_000;

/**
 * Starts a command in a process group of its own (`npm` starts node under it: the group is
 * what is stopped); `text()` is what it wrote so far, `exit` its exit code.
 */
function start(command, args, env) {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const out = { child, stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (s) => (out.stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr += s));
  out.exit = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  out.stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
    }
    await out.exit;
  };
  return out;
}

/** `npm run worker:dev` on free ports with `env`; resolves once it printed its last line. */
async function startWorkerDev(t, env) {
  const [workerPort, simPort] = [await freePort(), await freePort()];
  const dev = start("npm", ["run", "worker:dev"], { WORKER_PORT: String(workerPort), SIM_PORT: String(simPort), CRON_EVERY_MS: "0", ...env });
  t.after(() => dev.stop());
  await until(
    () => {
      if (dev.child.exitCode !== null) throw new Error(`worker:dev exited with ${dev.child.exitCode}:\n${dev.stdout}${dev.stderr}`);
      return dev.stdout.includes("Ctrl-C stops both.");
    },
    { everyMs: 50, timeoutMs: START_TIMEOUT_MS, what: "worker:dev's last line", detail: () => dev.stdout + dev.stderr },
  );
  return { dev, workerOrigin: `http://127.0.0.1:${workerPort}`, simOrigin: `http://127.0.0.1:${simPort}` };
}

/** worker:dev's printed v4 curl launch (the line as printed), run by the shell: the worker's answer. */
async function launchAsPrinted(dev) {
  const line = dev.stdout.split("\n").find((l) => /^\s+curl -X POST .*\/v4\/actions\/[^/]+\/async$/.test(l));
  assert.ok(line, `a v4 curl launch printed:\n${dev.stdout}`);
  assert.match(line, /-H 'authorization: Bearer \S+'/, "with the admin token header");
  assert.match(line, /--data @\S*examples\/worker\/v4-launch\.json /, "with the README's body file");
  const curl = start("sh", ["-c", line.trim()], {});
  assert.equal(await curl.exit, 0, curl.stderr);
  const answer = JSON.parse(curl.stdout);
  assert.ok(answer.run_uid && answer.read_token, curl.stdout);
  return { line: line.trim(), answer };
}

/** The CLI's watch of the run through the worker, as the "then:" line printed it: `{ code, stdout, stderr }`. */
async function watch(dev, workerOrigin, { run_uid: runUid, read_token: token }) {
  const printed = dev.stdout.split("\n").find((l) => /^\s+then: CAPTAINDATA_READ_TOKEN=<read_token> npx captaindata-poller watch <run_uid> --base-url \S+$/.test(l));
  assert.ok(printed, "the watch line printed");
  assert.ok(printed.endsWith(`--base-url ${workerOrigin}/v3`));
  const cli = start(process.execPath, [CLI, "watch", runUid, "--base-url", `${workerOrigin}/v3`, "--interval", "200ms"], { CAPTAINDATA_READ_TOKEN: token });
  const code = await cli.exit;
  return { code, stdout: cli.stdout, stderr: cli.stderr };
}

/** What the simulator made of the run: its batches (`rows` each, in order) and the ones whose callback was lost. */
async function simTruth(simOrigin, runUid) {
  const run = await (await fetch(`${simOrigin}/__sim/v4/runs/${runUid}`)).json();
  const deliveries = await (await fetch(`${simOrigin}/__sim/v4/deliveries?run=${runUid}`)).json();
  const lost = new Set(deliveries.filter((d) => d.parent_uid === null && d.status === "FAILED").map((d) => d.batch_uid));
  let next = 0;
  const batches = run.batches.map((b) => {
    const ids = Array.from({ length: b.rows }, (_, i) => `row-${next + i}`);
    next += b.rows;
    return { ...b, ids, lost: lost.has(b.batchUid) };
  });
  return { run, batches };
}

/**
 * worker:dev's printed CLI launch (`… npx captaindata-poller run <action> --v4 …`), run by the
 * shell as printed, with a quicker pace for the watch: `{ code, stdout, stderr, runUid }`.
 */
async function runAsPrinted(dev, workerOrigin) {
  const line = dev.stdout.split("\n").find((l) => /^\s+or: CAPTAINDATA_ADMIN_TOKEN=\S+ npx captaindata-poller run \S+ --v4 --inputs \S+ --base-url \S+$/.test(l));
  assert.ok(line, `a v4 CLI launch printed:\n${dev.stdout}`);
  assert.ok(line.endsWith(`--base-url ${workerOrigin}`), line);
  assert.match(line, /--inputs \S*examples\/worker\/v4-inputs\.json /, "with the README's inputs file");
  const cli = start("sh", ["-c", `${line.trim().replace(/^or: /, "")} --interval 200ms`], {});
  const code = await cli.exit;
  const launched = cli.stderr.match(/launched v4 run (\S+) of action linkedin-extract-people \(2 inputs\)/);
  assert.ok(launched, `the CLI names the run it launched:\n${cli.stderr}`);
  return { code, stdout: cli.stdout, stderr: cli.stderr, runUid: launched[1] };
}

const ids = (ndjson) => ndjson.split("\n").filter(Boolean).map((l) => JSON.parse(l).id);

// 2 inputs in the README's body × 10 rows, pages of 5: 4 pages and the final callback.
const SHAPE = { V4_ROWS: "10", V4_ROWS_PER_CALLBACK: "5", V4_DURATION_MS: "1000" };

/** A whole run as the CLI tells it: 2 inputs × 10 rows, each once, in order; exit 0. */
async function assertWhole(simOrigin, runUid, out) {
  assert.equal(out.code, 0, out.stderr);
  assert.deepEqual(ids(out.stdout), Array.from({ length: 20 }, (_, i) => `row-${i}`), "2 inputs × 10 rows, each once, in order");
  assert.match(out.stderr, /done: run finished, 20 rows/);
  const { run } = await simTruth(simOrigin, runUid);
  assert.deepEqual([run.action, run.status, run.rows], ["linkedin-extract-people", "SUCCEEDED", 20]);
}

/** A run whose lost callbacks were never replayed, as the CLI tells it: ROWS_MISSING, the batches named, exit 6. */
async function assertIncomplete(simOrigin, runUid, out) {
  assert.equal(out.code, 6, out.stderr);
  const { batches } = await simTruth(simOrigin, runUid);
  const lostWithRows = batches.filter((b) => b.lost && b.rows > 0);
  assert.ok(lostWithRows.length > 0 && lostWithRows.length < 4, `some pages lost, not all (${lostWithRows.length})`);
  const missing = lostWithRows.reduce((n, b) => n + b.rows, 0);
  assert.match(out.stderr, new RegExp(`incomplete: the run ended with rows missing \\(ROWS_MISSING\\): [^\\n]*${lostWithRows.length} batch`));
  for (const b of lostWithRows) assert.ok(out.stderr.includes(b.batchUid), `lost batch ${b.batchUid} named`);
  assert.match(out.stderr, new RegExp(`; ${20 - missing} rows written`));
  assert.doesNotMatch(out.stdout + out.stderr, /run finished/);
  const expected = batches.filter((b) => !b.lost).flatMap((b) => b.ids);
  assert.deepEqual(ids(out.stdout).sort(), expected.sort(), "every row delivered written once");
}

test("worker:dev's printed v4 launches, curl then watch and the CLI's run --v4, each run as printed: every row once, exit 0", async (t) => {
  const { dev, workerOrigin, simOrigin } = await startWorkerDev(t, SHAPE);
  const { answer } = await launchAsPrinted(dev);
  await assertWhole(simOrigin, answer.run_uid, await watch(dev, workerOrigin, answer));
  const cli = await runAsPrinted(dev, workerOrigin);
  assert.notEqual(cli.runUid, answer.run_uid, "a run of its own");
  await assertWhole(simOrigin, cli.runUid, cli);
});

test("the same with callbacks lost and every replay lost: ROWS_MISSING, the lost batches named, exit 6, nothing reported finished", async (t) => {
  const { dev, workerOrigin, simOrigin } = await startWorkerDev(t, {
    ...SHAPE,
    V4_LOST: "0.3",
    V4_REPLAYS_LOST: "1",
    // The worker's own pace, so its 3 replays per batch and the status read take seconds, not minutes.
    V4_RECHECK_MS: "100",
    V4_STATUS_INTERVAL_MS: "200",
  });
  assert.match(dev.stdout, /^v4 run: {4}10 rows per input, 5 per callback, over 1 s; faults: lostRate 0\.3, replayLostRate 1/m);
  const { answer } = await launchAsPrinted(dev);
  await assertIncomplete(simOrigin, answer.run_uid, await watch(dev, workerOrigin, answer));
  const cli = await runAsPrinted(dev, workerOrigin);
  await assertIncomplete(simOrigin, cli.runUid, cli);
});
