// The CLI as a user gets it: `npm pack`, installed into an empty project, then run through the
// `captaindata-poller` bin npm linked (the package.json `bin`, the `files` list, and the CLI's
// import of the package by its own name, all at once).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { ndjsonIds, readScratch, rowIds, runCli, simFlags, spawnCli, useCliSim, waitFor } from "./cli-fixture.mjs";

const ctx = useCliSim();

test("the packed package, installed: its captaindata-poller bin watches a run and streams the rows", async () => {
  const project = path.join(ctx.dir, "app");
  mkdirSync(project);
  writeFileSync(path.join(project, "package.json"), '{ "name": "app", "private": true }\n');
  // --ignore-scripts: pack the dist/ and pkg/ already built (prepack would rebuild them).
  const tarball = execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", ctx.dir], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim().split("\n").at(-1);
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", path.join(ctx.dir, tarball)], { cwd: project, stdio: "ignore" });

  const { jobUid } = ctx.sim.createJob({ rows: 1500, durationMs: 300 });
  const bin = path.join(project, "node_modules", ".bin", "captaindata-poller");
  const { code, stdout, stderr } = await runCli(ctx, ["watch", jobUid, ...simFlags(ctx)], { cwd: project, command: bin });
  assert.equal(code, 0, stderr);
  assert.deepEqual(ndjsonIds(stdout), rowIds(1500));
});

test("through npx (npm exec): SIGTERM to npx, which exits at once, still stops the CLI it started, with the resume command", { timeout: 120_000 }, async () => {
  const project = path.join(ctx.dir, "app");
  // Ten rows every two seconds, for ten minutes.
  const { jobUid } = ctx.sim.createJob({ rows: 3000, durationMs: 600_000, arrival: { bursts: 300 } });
  // npm runs the project's bin, offline; its stdio is the CLI's, so `exit` waits for the CLI too.
  const npx = spawnCli(ctx, ["exec", "--offline", "--", "captaindata-poller", "watch", jobUid, "--out", "../npx.ndjson", "--state", "../npx.state.json", ...simFlags(ctx)], { cwd: project, command: "npm" });
  await waitFor(() => readScratch(ctx, "npx.ndjson").includes('"row-0"'), "a first row in npx.ndjson", 60_000);
  npx.child.kill("SIGTERM");
  await npx.exit;
  assert.match(npx.stderr, /stopped by (SIGTERM|the end of npx): [\d,]+ rows? written to \.\.\/npx\.ndjson\. To resume:\n {2}npx captaindata-poller watch /);
  const written = ndjsonIds(readScratch(ctx, "npx.ndjson"));
  assert.equal(JSON.parse(readScratch(ctx, "npx.state.json")).rows, written.length, "the state matches the rows");
  assert.equal(ctx.sim.job(jobUid).status, "running");
});


test("through npx: SIGINT to npx (npm hands it to its shell only) stops the CLI like Ctrl-C, exit 130, with the resume command", { timeout: 120_000, skip: !existsSync("/proc/self/status") && "needs Linux /proc" }, async () => {
  const project = path.join(ctx.dir, "app");
  const { jobUid } = ctx.sim.createJob({ rows: 3000, durationMs: 600_000, arrival: { bursts: 300 } });
  const npx = spawnCli(ctx, ["exec", "--offline", "--", "captaindata-poller", "watch", jobUid, "--out", "../npx-int.ndjson", "--state", "../npx-int.state.json", ...simFlags(ctx)], { cwd: project, command: "npm" });
  await waitFor(() => readScratch(ctx, "npx-int.ndjson").includes('"row-0"'), "a first row in npx-int.ndjson", 60_000);
  npx.child.kill("SIGINT"); // to npm's pid only, as `kill -INT <pid of npx>` does
  // npm ends as its shell did, killed by SIGINT once the CLI exited 130: a shell shows 130.
  const { code, signal } = await npx.exit;
  assert.ok(code === 130 || signal === "SIGINT", `${code} ${signal}: ${npx.stderr}`);
  assert.match(npx.stderr, /stopped by SIGINT to npx: [\d,]+ rows? written to \.\.\/npx-int\.ndjson\. To resume:\n {2}npx captaindata-poller watch /);
  const written = ndjsonIds(readScratch(ctx, "npx-int.ndjson"));
  assert.equal(JSON.parse(readScratch(ctx, "npx-int.state.json")).rows, written.length, "the state matches the rows");
  assert.equal(ctx.sim.job(jobUid).status, "running", "stopped long before the run's end");
});
