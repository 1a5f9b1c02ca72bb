// Retention that cannot be lost: when every retry of an ended run's deletion alarm failed, the
// alarm is gone and nothing would delete the run's rows (personal data). The cron's sweep looks
// at ended runs again (rarely) and sets their deletion anew. The loss is made as workerd leaves
// it: the persisted storage without the run's alarm (workerd stopped meanwhile).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { startWorker } from "./worker-fixture.mjs";

const DAY_MS = 86_400_000;

/** Runs SQL on a persisted SQLite file of workerd's (stopped), with Python's sqlite3. */
function sql(file, statements) {
  const script = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nfor s in sys.argv[2:]: c.execute(s)\nc.commit()\nc.close()";
  execFileSync("python3", ["-c", script, file, ...statements]);
}

/** The object databases (not the scheduler's metadata.sqlite) under a class's folder. */
const objectFiles = (dir, className) =>
  readdirSync(path.join(dir, `captaindata-poller-${className}`))
    .filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")
    .map((name) => path.join(dir, `captaindata-poller-${className}`, name));

test("an ended run whose deletion alarm is gone gets it back from the cron's sweep (retired runs included)", { timeout: 120000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "retention-"));
  const w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0" }, sim: { webhook: null }, persist: dir });
  try {
    const { jobUid } = w.sim.createJob({ rows: 12, durationMs: 0, pageSize: 10 });
    const token = await w.track(jobUid);
    await w.untilDone(jobUid, token);
    const ns = await w.mf.getDurableObjectNamespace("RUNS");
    const { finished_at: finishedAt } = await ns.get(ns.idFromName(jobUid)).load();
    assert.equal((await w.runStorage(jobUid)).alarm, finishedAt + 30 * DAY_MS, "the deletion is set");
    // A sweep retires the ended run: later sweeps skip it, but for the rare look again.
    await w.tick();
    await w.until(async () => (await w.registryStats()).retired === 1, "the ended run to be retired");

    await w.restart({}, {
      whileStopped() {
        // Every retry of the deletion failed: the alarm is gone, from the object and the scheduler.
        for (const file of objectFiles(dir, "RunTracker")) sql(file, ["DELETE FROM _cf_METADATA WHERE key = 1"]);
        sql(path.join(dir, "captaindata-poller-RunTracker", "metadata.sqlite"), ["DELETE FROM _cf_ALARM"]);
        // Its last look was over an hour ago (the time a retired run waits for the next one).
        for (const file of objectFiles(dir, "Registry")) sql(file, [`UPDATE runs SET checked_at = ${Date.now() - 2 * 3_600_000}`]);
      },
    });
    const lost = await w.runStorage(jobUid);
    assert.equal(lost.alarm, null, "the alarm is gone after the failure");
    assert.equal(lost.rows, 12, "and the rows are still stored");

    await w.tick();
    const again = await w.until(async () => (await w.runStorage(jobUid)).alarm, "the sweep to set the deletion again");
    assert.equal(again, finishedAt + 30 * DAY_MS, "the deletion is back where it was: RETENTION_DAYS after the end");
    assert.ok(w.logs.some((line) => line.includes(`run ${jobUid}: its deletion alarm was gone`)), "the repair is logged");
    assert.equal((await w.registryStats()).retired, 1, "the run stays retired");
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
