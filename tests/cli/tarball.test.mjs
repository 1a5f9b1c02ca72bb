// The CLI as a user gets it: `npm pack`, installed into an empty project, then run through the
// `captaindata-poller` bin npm linked (the package.json `bin`, the `files` list, and the CLI's
// import of the package by its own name, all at once).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { ndjsonIds, rowIds, runCli, simFlags, useCliSim } from "./cli-fixture.mjs";

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
