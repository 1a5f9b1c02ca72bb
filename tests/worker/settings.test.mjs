// The worker's settings as an operator meets them: a wrong setting (a missing secret, a bad
// variable) is a configuration fault named in the run, the logs and GET /health, never retried
// as a Captain Data outage, and polling resumes by itself once a deploy fixes it; a run keeps
// the page size it was first served with when PAGE_SIZE changes.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { API_KEY, SECRETS, rowIds, startWorker } from "./worker-fixture.mjs";

const ADMIN = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };

/** A worker on persisted storage, so that `restart(bindings)` is a deploy with new settings. */
async function withWorker(bindings, body) {
  const dir = mkdtempSync(path.join(tmpdir(), "cdp-settings-"));
  const w = await startWorker({ persist: dir, bindings: { POLL_INTERVAL_MS: "0", MAX_FAILED_STEPS: "2", ...bindings }, sim: { webhook: null } });
  try {
    await body(w);
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ticks the cron `n` times, each until the registry's sweep has kicked the runs. */
async function ticks(w, n) {
  for (let i = 0; i < n; i++) {
    const before = (await w.registryStats()).kicksPerInvocation.length;
    await w.tick();
    await w.until(async () => (await w.registryStats()).kicksPerInvocation.length > before, "the sweep's kicks");
  }
}

test("a missing secret: the run names it, so do the logs and /health; no request, no give-up; fixed by a deploy, polling resumes", async () => {
  await withWorker({ CAPTAINDATA_API_KEY: "" }, async (w) => {
    const { jobUid } = w.sim.createJob({ rows: 30, durationMs: 0, pageSize: 10 });
    const token = await w.track(jobUid);
    const held = await w.untilRun(jobUid, token, (run) => run.status === "paused", "held for its configuration");
    // Readers learn that polling waits for the configuration; the setting is named to operators only.
    assert.match(held.error_message, /cannot poll this run until its configuration is fixed/);
    assert.match(held.error_message, /resumes by itself once it is fixed/);
    assert.doesNotMatch(held.error_message, /CAPTAINDATA_API_KEY/);
    assert.ok(w.logs.some((line) => /worker configuration: .*CAPTAINDATA_API_KEY is not set/.test(line)), w.logs.join("\n"));

    // Not an outage: cron ticks step it again, but no request goes out and no failed step is
    // counted (MAX_FAILED_STEPS is 2: an outage would be given up after two steps).
    await ticks(w, 4);
    // No alarm due and nothing in flight: a counted failure would have armed its back-off.
    await w.untilNoStepDue(jobUid, "no step after the held ones");
    const still = (await w.run(jobUid, token)).body;
    assert.deepEqual([still.status, still.error_message], [held.status, held.error_message]);
    assert.equal(w.sim.stats(jobUid).requests.total, 0, "no request without a key");

    const health = await w.call("/health", { headers: ADMIN });
    assert.equal(health.status, 503);
    assert.deepEqual(health.body.problems.map((p) => [p.setting, p.stops_polling]), [["CAPTAINDATA_API_KEY", true]]);
    assert.equal((await w.call("/health")).status, 401, "admin only");

    await w.restart({ CAPTAINDATA_API_KEY: API_KEY }); // the fix, deployed
    assert.deepEqual((await w.call("/health", { headers: ADMIN })).body, { ok: true, problems: [] });
    await w.tick();
    const end = await w.untilDone(jobUid, token);
    assert.deepEqual([end.status, end.error_message], ["finished", null]);
    assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(30));
  });
});

test("a bad variable is named too; a bad origin stops only CORS, and reads keep working", async () => {
  await withWorker({ RETRY_RETRIES: "three", ALLOWED_ORIGINS: "https://app.example, app.example" }, async (w) => {
    const { jobUid } = w.sim.createJob({ rows: 20, durationMs: 0, pageSize: 10 });
    const token = await w.track(jobUid);
    const held = await w.untilRun(jobUid, token, (run) => run.status === "paused", "held for its configuration");
    assert.doesNotMatch(held.error_message, /RETRY_RETRIES|three/, "no setting and no value to readers");
    assert.ok(w.logs.some((line) => /worker configuration: .*RETRY_RETRIES/.test(line)));
    const health = await w.call("/health", { headers: ADMIN });
    assert.equal(health.status, 503);
    assert.deepEqual(
      health.body.problems.map((p) => [p.setting, p.stops_polling]),
      [["RETRY_RETRIES", true], ["ALLOWED_ORIGINS", false]],
    );
    assert.match(health.body.problems[0].message, /RETRY_RETRIES must be an integer ≥ 0 \(it is "three"\)/);
    assert.match(health.body.problems[1].message, /"app.example", which is not an origin/);
    const cors = await w.call(`/v3/jobs/${jobUid}`, { headers: { origin: "https://app.example", "x-read-token": token } });
    assert.deepEqual([cors.status, cors.headers.get("access-control-allow-origin")], [200, "https://app.example"]);

    await w.restart({ RETRY_RETRIES: "3" });
    await w.tick();
    const end = await w.untilDone(jobUid, token);
    assert.equal(end.status, "finished");
    assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(20));
  });
});

test("a missing secret on a route: named to the operator (admin token) and in the logs; anyone else gets a generic 500", async () => {
  await withWorker({ READ_TOKEN_SECRET: "" }, async (w) => {
    const res = await w.call("/v3/jobs/some-run/track", { method: "POST", headers: ADMIN });
    assert.deepEqual([res.status, res.body.setting], [500, "READ_TOKEN_SECRET"]);
    assert.match(res.body.message, /READ_TOKEN_SECRET is not set/);
    const reader = await w.call("/v3/jobs/some-run", { headers: { "x-read-token": "v2.1.x.y" } });
    assert.deepEqual([reader.status, reader.body], [500, { message: "Internal error" }]);
    assert.ok(w.logs.some((line) => /worker configuration: .*READ_TOKEN_SECRET/.test(line)));
    const health = await w.call("/health", { headers: ADMIN });
    assert.deepEqual(health.body.problems.map((p) => [p.setting, p.stops_polling]), [["READ_TOKEN_SECRET", false]]);
  });
});

test("PAGE_SIZE changed while runs are tracked: a run keeps the page size it was first served with", async () => {
  await withWorker({ PAGE_SIZE: "10" }, async (w) => {
    const { jobUid } = w.sim.createJob({ rows: 40, durationMs: 0, pageSize: 10 });
    const token = await w.track(jobUid);
    await w.untilDone(jobUid, token);
    const first = await w.call(`/v3/jobs/${jobUid}/results`, { headers: { "x-read-token": token } });
    assert.deepEqual(first.body.results.map((r) => r.id), rowIds(10));
    const next = first.body.paging.next; // what a reader's cursor holds: `?page=2`
    assert.match(next, /\?page=2$/);

    await w.restart({ PAGE_SIZE: "25" });
    const second = await w.call(next.slice(w.origin.length), { headers: { "x-read-token": token } });
    assert.deepEqual(second.body.results.map((r) => r.id), rowIds(10, 10), "page 2 still starts after the rows of page 1");
    assert.deepEqual((await w.rows(jobUid, token)).map((r) => r.id), rowIds(40));

    // A run served for the first time after the change gets the new size.
    const later = w.sim.createJob({ rows: 40, durationMs: 0, pageSize: 10 });
    const laterToken = await w.track(later.jobUid);
    await w.untilDone(later.jobUid, laterToken);
    const page = await w.call(`/v3/jobs/${later.jobUid}/results`, { headers: { "x-read-token": laterToken } });
    assert.equal(page.body.results.length, 25);
  });
});
