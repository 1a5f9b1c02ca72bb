// Registry: the list of tracked runs, and the fan-out of a cron tick. A tick starts a sweep;
// the sweep kicks at most `fanoutChunk` runs per alarm invocation (each kick is one
// subrequest) and re-arms the alarm for the next chunk, so no invocation loops over them all.
import { DurableObject } from "cloudflare:workers";
import { settings } from "./config.js";

const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS runs (job_uid TEXT PRIMARY KEY, active INTEGER NOT NULL, added_at INTEGER NOT NULL)",
  `CREATE TABLE IF NOT EXISTS sweep (id INTEGER PRIMARY KEY CHECK (id = 1), after TEXT NOT NULL,
     running INTEGER NOT NULL, again INTEGER NOT NULL)`,
  "CREATE TABLE IF NOT EXISTS sweep_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kicks INTEGER NOT NULL)",
  "INSERT OR IGNORE INTO sweep (id, after, running, again) VALUES (1, '', 0, 0)",
];
const LOG_KEPT = 200;
// How often a sweep looks again at a retired (ended) run: its deletion alarm may be gone (every
// retry of it failed), and only a kick sets it again. Rarely, so ended runs cost few kicks.
const RETIRED_CHECK_MS = 3_600_000;

/** The one registry of a deployment. */
export function registryOf(env) {
  return env.REGISTRY.get(env.REGISTRY.idFromName("registry"));
}

/** The RunTracker of a run: one per job uid. */
export function trackerOf(env, jobUid) {
  return env.RUNS.get(env.RUNS.idFromName(jobUid));
}

export class Registry extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    for (const statement of SCHEMA) this.sql.exec(statement);
    // Added after the first deployment: when a retired run was last looked at.
    const columns = this.sql.exec("SELECT name FROM pragma_table_info('runs')").toArray().map((c) => c.name);
    if (!columns.includes("checked_at")) this.sql.exec("ALTER TABLE runs ADD COLUMN checked_at INTEGER");
  }

  /**
   * Adds a run to the sweeps (idempotent; a retired run becomes active again). A run not listed
   * yet is refused when `maxRuns` runs are listed already, unless `force` (a run launched
   * already is always tracked: nothing of it may be left unstored).
   * @returns {"added" | "present" | "full"}
   */
  add(jobUid, maxRuns = Infinity, force = false) {
    const present = this.sql.exec("SELECT 1 FROM runs WHERE job_uid = ?", jobUid).toArray().length > 0;
    if (!present && !force && !this.hasRoom(maxRuns)) return "full";
    this.sql.exec(
      "INSERT INTO runs (job_uid, active, added_at) VALUES (?, 1, ?) ON CONFLICT (job_uid) DO UPDATE SET active = 1",
      jobUid,
      Date.now(),
    );
    return present ? "present" : "added";
  }

  /** Whether one more run fits under MAX_TRACKED_RUNS (every stored run counts, ended ones too). */
  hasRoom(maxRuns) {
    return this.sql.exec("SELECT COUNT(*) AS n FROM runs").one().n < maxRuns;
  }

  /** Forgets a run (its RunTracker deletes its own storage). */
  remove(jobUid) {
    this.sql.exec("DELETE FROM runs WHERE job_uid = ?", jobUid);
  }

  /** A cron tick: start a sweep, or ask the running one to start over when it ends. */
  async tick() {
    const sweep = this.sql.exec("SELECT running FROM sweep WHERE id = 1").one();
    // A sweep whose alarm is gone (an invocation died) is restarted rather than waited for.
    if (sweep.running && (await this.ctx.storage.getAlarm()) !== null) {
      this.sql.exec("UPDATE sweep SET again = 1 WHERE id = 1");
      return;
    }
    this.sql.exec("UPDATE sweep SET after = '', running = 1, again = 0 WHERE id = 1");
    await this.ctx.storage.setAlarm(Date.now());
  }

  /** One chunk of a sweep: kick the next runs, retire those that ended, forget those not stored. */
  async alarm() {
    const { fanoutChunk } = settings(this.env);
    const { after } = this.sql.exec("SELECT after FROM sweep WHERE id = 1").one();
    const chunk = this.sql
      .exec(
        "SELECT job_uid FROM runs WHERE (active = 1 OR COALESCE(checked_at, 0) <= ?) AND job_uid > ? ORDER BY job_uid LIMIT ?",
        Date.now() - RETIRED_CHECK_MS,
        after,
        fanoutChunk,
      )
      .toArray()
      .map((r) => r.job_uid);
    const states = await Promise.allSettled(chunk.map((jobUid) => trackerOf(this.env, jobUid).kick()));
    states.forEach((s, i) => {
      if (s.status !== "fulfilled" || s.value === "active") return;
      // A run that stores nothing (deleted, or never stored) is forgotten: it must not count
      // towards MAX_TRACKED_RUNS. An ended one is retired until its deletion, and looked at
      // again every RETIRED_CHECK_MS (its kick re-arms a deletion alarm that is gone).
      if (s.value === "unknown") this.remove(chunk[i]);
      else this.sql.exec("UPDATE runs SET active = 0, checked_at = ? WHERE job_uid = ?", Date.now(), chunk[i]);
    });
    this.logChunk(chunk.length);
    await this.advance(chunk, fanoutChunk);
  }

  async advance(chunk, fanoutChunk) {
    if (chunk.length === fanoutChunk) {
      this.sql.exec("UPDATE sweep SET after = ? WHERE id = 1", chunk[chunk.length - 1]);
      await this.ctx.storage.setAlarm(Date.now());
      return;
    }
    const { again } = this.sql.exec("SELECT again FROM sweep WHERE id = 1").one();
    this.sql.exec("UPDATE sweep SET after = '', running = ?, again = 0 WHERE id = 1", again);
    if (again) await this.ctx.storage.setAlarm(Date.now());
  }

  logChunk(kicks) {
    this.sql.exec("INSERT INTO sweep_log (at, kicks) VALUES (?, ?)", Date.now(), kicks);
    this.sql.exec("DELETE FROM sweep_log WHERE seq <= (SELECT MAX(seq) FROM sweep_log) - ?", LOG_KEPT);
  }

  /** Counts for operators (and tests): runs by state, kicks per recent alarm invocation. */
  stats() {
    const { active, retired } = this.sql
      .exec("SELECT COALESCE(SUM(active), 0) AS active, COUNT(*) - COALESCE(SUM(active), 0) AS retired FROM runs")
      .one();
    const kicks = this.sql.exec("SELECT kicks FROM sweep_log ORDER BY seq").toArray().map((r) => r.kicks);
    return { active, retired, kicksPerInvocation: kicks };
  }
}
