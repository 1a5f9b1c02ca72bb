// The CLI against a run that ended with rows known missing (issue 37, point 1): `watch` writes
// every stored row, names the missing batches (the first 5, control characters stripped) and
// the count, never says "finished", and exits 6; `status --exit-status` exits 6 too.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { EXIT } from "../../bin/exit-codes.mjs";
import { JOB_UID, startRowsMissingServer } from "../support/rows-missing-server.mjs";
import { API_KEY, runCli } from "./cli-fixture.mjs";

const ctx = { texts: [], children: new Set() };
let server;
before(() => {
  ctx.dir = mkdtempSync(path.join(tmpdir(), "cdp-cli-incomplete-"));
});
after(async () => {
  for (const child of ctx.children) child.kill("SIGKILL");
  for (const { where, text } of ctx.texts) assert.ok(!text.includes(API_KEY), `the API key appears in ${where}`);
  await server?.close();
  rmSync(ctx.dir, { recursive: true, force: true });
});

const fresh = async (options) => {
  await server?.close();
  server = await startRowsMissingServer(options);
};
const flags = () => ["--base-url", server.baseUrl, "--interval", "50ms"];

test("watch: every stored row on stdout, the missing batches named on stderr, exit 6, nothing finished", async () => {
  await fresh();
  const { code, stdout, stderr } = await runCli(ctx, ["watch", JOB_UID, ...flags()]);
  assert.equal(code, EXIT.ROWS_MISSING, stderr);
  assert.equal(EXIT.ROWS_MISSING, 6);
  const ids = stdout.trim().split("\n").map((line) => JSON.parse(line).id);
  assert.deepEqual(ids, server.rows.map((row) => row.id), "every stored row, once");
  assert.match(stderr, /incomplete: the run ended with rows missing \(ROWS_MISSING\): 70 rows in 7 batches: b-7, b-8, b-9, b-10, b-11 and 2 more; 30 rows written/);
  assert.doesNotMatch(stderr, /finished|done:/, "never reported as finished");
  assert.doesNotMatch(stderr, /\x1b\[31m|\x07/, "the server's control characters never reach the terminal");
});

test("watch --out: ROWS_CAP_REACHED exits 6 with its code, the file named", async () => {
  await fresh({ code: "ROWS_CAP_REACHED", missing: { batches: [], batch_count: 0, count: null, run_status: "RUNNING" } });
  const { code, stderr } = await runCli(ctx, ["watch", JOB_UID, "--out", "capped.ndjson", ...flags()]);
  assert.equal(code, 6, stderr);
  assert.match(stderr, /rows missing \(ROWS_CAP_REACHED\): rows unknown in number in 0 batches; 30 rows written to capped\.ndjson/);
});

test("status --exit-status: 6 for a run that ended with rows missing, and the batches named", async () => {
  await fresh();
  for (let reads = 0; reads < 4; reads += 1) await fetch(`${server.baseUrl}/jobs/${JOB_UID}`); // the run has ended
  const { code, stdout, stderr } = await runCli(ctx, ["status", JOB_UID, "--exit-status", "--base-url", server.baseUrl]);
  assert.equal(code, 6, stderr);
  assert.match(stdout, /status\s+shutdown/);
  assert.match(stdout, /rows missing \(ROWS_MISSING\): 70 rows in 7 batches: b-7, b-8, b-9, b-10, b-11 and 2 more/);
  // Without the field, the same shutdown run is a failure (1), as before.
  await fresh({ missing: null });
  for (let reads = 0; reads < 4; reads += 1) await fetch(`${server.baseUrl}/jobs/${JOB_UID}`);
  const failed = await runCli(ctx, ["status", JOB_UID, "--exit-status", "--base-url", server.baseUrl]);
  assert.equal(failed.code, EXIT.RUN_FAILED, failed.stderr);
});
