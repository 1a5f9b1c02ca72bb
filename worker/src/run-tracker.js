// RunTracker: one Durable Object per tracked run. Its SQLite storage holds the cursor and the
// rows keyed by their offset; its alarm runs one pollStep per invocation (own subrequest budget)
// while the run goes, and deletes everything RETENTION_DAYS after it ended.
import { DurableObject } from "cloudflare:workers";
import { pollStep } from "captaindata-poller";
import { newTokenEpoch } from "./access.js";
import { ConfigError, connection, redacted, refusedSetting, settings } from "./config.js";
import { isWorkerFinal } from "./limits.js";
import { registryOf } from "./registry.js";
import { applyStep, nextStepIn } from "./step-outcome.js";
import { answerPings, StreamViewers, viewerToken } from "./stream.js";
import { isMissing, resultsBody, runBody } from "./v3-shapes.js";
import { kickV4, storeV4Callback, trackV4, v4Alarm } from "./v4-tracker.js";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS run (
     id INTEGER PRIMARY KEY CHECK (id = 1), job_uid TEXT NOT NULL, name TEXT, workflow_uid TEXT,
     cursor TEXT, status TEXT NOT NULL, done INTEGER NOT NULL, error_code TEXT, error_message TEXT,
     row_count INTEGER NOT NULL, version INTEGER NOT NULL, webhook TEXT, webhook_gen INTEGER NOT NULL,
     failed_steps INTEGER NOT NULL, steps INTEGER NOT NULL, created_at INTEGER NOT NULL, finished_at INTEGER,
     page_size INTEGER, config_error TEXT, token_epoch TEXT, webhook_at INTEGER, rows_missing TEXT, number_inputs INTEGER)`,
  "CREATE TABLE IF NOT EXISTS rows (position INTEGER PRIMARY KEY, body TEXT NOT NULL)",
];
// Columns added after the first deployment: objects created before them get them on load.
// `rows_missing`: JSON, what a run that ended with rows missing lacks (v3-shapes.js `rows_missing`).
// `number_inputs`: the inputs a v4 launch sent (a v3 run's are not read: null).
const ADDED_COLUMNS = { page_size: "INTEGER", config_error: "TEXT", token_epoch: "TEXT", webhook_at: "INTEGER", rows_missing: "TEXT", number_inputs: "INTEGER" };

// Sent with every request of a step: lets logs (and tests) tell the steps' requests apart.
const STEP_HEADER = "x-poller-step";

export class RunTracker extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    // Whether the tables exist (null: not looked yet). Only tracking creates them: a read, a
    // kick or a webhook for a run that is not stored (or was deleted) writes nothing.
    this.tablesExist = null;
    answerPings(ctx);
    this.viewers = new StreamViewers(ctx, this.sql, () => this.load());
    this.awakeSince = Date.now();
  }

  hasTables() {
    if (this.tablesExist === null) {
      this.tablesExist = this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run'").toArray().length > 0;
      if (this.tablesExist) this.addColumns();
    }
    return this.tablesExist;
  }

  createTables() {
    for (const statement of SCHEMA) this.sql.exec(statement);
    this.tablesExist = true;
    this.addColumns();
  }

  addColumns() {
    const have = new Set(this.sql.exec("SELECT name FROM pragma_table_info('run')").toArray().map((c) => c.name));
    for (const [name, type] of Object.entries(ADDED_COLUMNS)) {
      if (!have.has(name)) this.sql.exec(`ALTER TABLE run ADD COLUMN ${name} ${type}`);
    }
  }

  /** A commit's rows, status and end to the stream's viewers (v3 steps and v4 callbacks alike). */
  publish(before, now, rows) {
    this.viewers.publish(before, now, rows);
  }

  /** For operators (and tests): the stream's viewers, and since when this instance is awake (it hibernates while idle). */
  streamStats() {
    return { viewers: this.ctx.getWebSockets().length, awakeSince: this.awakeSince };
  }

  /** `GET /v3/jobs/{uid}/stream`, authorised by the Worker: a viewer joins (worker/src/stream.js). */
  fetch(request) {
    const config = settings(this.env);
    return this.viewers.accept(this.readable(viewerToken(request).epoch), request, {
      maxViewers: config.maxStreamViewers,
      maxViewersPerToken: config.maxStreamViewersPerToken,
      pageSize: config.pageSize,
    });
  }

  /** A viewer's ack: the next rows it has room for. */
  webSocketMessage(ws, data) {
    this.viewers.message(ws, data);
  }

  webSocketClose(ws, code) {
    this.viewers.closed(ws, code);
  }

  webSocketError(ws) {
    this.viewers.closed(ws, 1011);
  }

  /** The stored run, or null when this object tracks nothing. */
  load() {
    return this.hasTables() ? (this.sql.exec("SELECT * FROM run WHERE id = 1").toArray()[0] ?? null) : null;
  }

  /** The run's token epoch (read tokens name it; revoking replaces it). */
  tokenEpoch(run) {
    if (run.token_epoch) return run.token_epoch;
    const epoch = newTokenEpoch(); // a run stored before tokens had epochs
    this.sql.exec("UPDATE run SET token_epoch = ? WHERE id = 1", epoch);
    return epoch;
  }

  /**
   * Starts tracking (idempotent) and steps at once, whatever the back-off of a run that is
   * tracked already (an operator tracking it again after an outage wants it read now). A run that
   * ended in an error (given up after MAX_FAILED_STEPS, or failed) is resumed from its cursor:
   * its stored rows are kept. A finished run (or one the worker ended for good, at its rows cap)
   * is left as it is. `epoch` is what the run's read tokens must name.
   * @returns {Promise<{ created: boolean, resumed: boolean, epoch: string }>}
   */
  async track(jobUid, info = {}) {
    const run = this.load();
    if (run) {
      const epoch = this.tokenEpoch(run);
      if (run.done && (!run.error_code || isWorkerFinal(run.error_code))) return { created: false, resumed: false, epoch };
      if (!run.done) {
        await this.ctx.storage.setAlarm(Date.now());
        return { created: false, resumed: false, epoch };
      }
      this.sql.exec(
        `UPDATE run SET done = 0, error_code = NULL, error_message = NULL, failed_steps = 0, finished_at = NULL,
           version = version + 1 WHERE id = 1`,
      );
      await this.ctx.storage.setAlarm(Date.now());
      return { created: false, resumed: true, epoch };
    }
    this.createTables();
    const epoch = newTokenEpoch();
    this.sql.exec(
      `INSERT INTO run (id, job_uid, name, workflow_uid, cursor, status, done, row_count, version,
         webhook_gen, failed_steps, steps, created_at, token_epoch) VALUES (1, ?, ?, ?, NULL, 'unknown', 0, 0, 0, 0, 0, 0, ?, ?)`,
      jobUid,
      info.name ?? null,
      info.workflowUid ?? null,
      Date.now(),
      epoch,
    );
    await this.ctx.storage.setAlarm(Date.now());
    return { created: true, resumed: false, epoch };
  }

  /** Revokes every read token issued for this run so far (tracking it again issues new ones). */
  revoke() {
    const run = this.load();
    if (!run) return false;
    this.sql.exec("UPDATE run SET token_epoch = ? WHERE id = 1", newTokenEpoch());
    this.viewers.drop("revoked");
    return true;
  }

  /**
   * Deletes everything this run stored (rows, cursor, state, its alarm): the object holds
   * nothing afterwards. A step in flight finds no run when it commits, and stores nothing.
   * @returns {Promise<boolean>} whether a run was stored
   */
  async erase() {
    const had = this.load() !== null;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.tablesExist = false;
    this.viewers.drop("deleted");
    return had;
  }

  /** What the object holds, for operators and tests: its tables, rows and alarm. */
  async storedData() {
    // Tables of the runtime's own (`_cf_…`, `sqlite_…`) are not the run's.
    const tables = this.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table'")
      .toArray()
      .map((t) => t.name)
      .filter((name) => !name.startsWith("_cf_") && !name.startsWith("sqlite_"));
    const rows = tables.includes("rows") ? this.sql.exec("SELECT COUNT(*) AS n FROM rows").one().n : 0;
    return { tables, rows, alarm: await this.ctx.storage.getAlarm() };
  }

  /**
   * A cron sweep asks for a step now. Returns the run's state so the registry can retire it. An
   * ended run whose alarm is gone (every retry of its deletion failed) gets its deletion again:
   * the personal data it holds must not stay for ever.
   * @returns {Promise<"active" | "done" | "unknown">}
   */
  async kick() {
    const run = this.load();
    if (!run) return "unknown";
    if (run.done) {
      if ((await this.ctx.storage.getAlarm()) === null) {
        const at = (run.finished_at ?? Date.now()) + settings(this.env).retentionMs;
        console.error(`run ${run.job_uid}: its deletion alarm was gone; set again`);
        await this.ctx.storage.setAlarm(Math.max(at, Date.now()));
      }
      return "done";
    }
    // A v4 run: its next round as early as V4_RECHECK_MS allows.
    if (await kickV4(this)) return "active";
    const at = await this.ctx.storage.getAlarm();
    // A run backing off after failed steps keeps its later alarm; a lost alarm is re-armed.
    if (at === null || (at > Date.now() && run.failed_steps === 0)) await this.ctx.storage.setAlarm(Date.now());
    return "active";
  }

  /**
   * A verified end webhook for this run: a hint to step now (the step reads the status and
   * drains the results; the run ends when the API says so). Duplicates only repeat that read
   * from the stored cursor, so they add no row twice. At most one webhook steps the run per
   * `minGapMs`: a flood (duplicates, or a leaked secret) cannot step it back to back against
   * the API key's quota; one inside the gap changes nothing.
   * @returns {Promise<"accepted" | "throttled" | "done" | "unknown">}
   */
  async webhook(payload, minGapMs) {
    const run = this.load();
    if (!run) return "unknown";
    if (run.done) return "done";
    const now = Date.now();
    if (run.webhook_at !== null && now - run.webhook_at < minGapMs) return "throttled";
    this.sql.exec("UPDATE run SET webhook = ?, webhook_gen = webhook_gen + 1, webhook_at = ? WHERE id = 1", JSON.stringify(payload), now);
    await this.ctx.storage.setAlarm(now);
    return "accepted";
  }

  /** Tracks a Captain Data v4 run the worker launched (worker/src/v4-tracker.js). */
  trackV4(runUid, info) {
    return trackV4(this, runUid, info);
  }

  /** Stores one v4 callback's batch, once by its batch_uid, if `presented` is the run's callback secret. */
  v4Callback(payload, seen, presented) {
    return storeV4Callback(this, payload, seen, presented);
  }

  /**
   * The run for a reader whose token names `epoch`: `{ run }` (the stored row), `{ missing }`
   * (not stored, or unknown to Captain Data) or `{ refused }` (its tokens were revoked).
   */
  readable(epoch) {
    const run = this.load();
    if (!run) return { missing: true };
    if (run.token_epoch !== epoch) return { refused: true };
    return isMissing(run) ? { missing: true } : { run };
  }

  /** `GET /jobs/{uid}` body for a reader (see `readable`). */
  runView(epoch) {
    const { run, ...refusal } = this.readable(epoch);
    return run ? { body: runBody(run) } : refusal;
  }

  /**
   * `GET /jobs/{uid}/results?page=N` body (JSON text) for a reader (see `readable`). The page size
   * the run was first served with is kept with it: readers' cursors hold `?page=N`, so a new
   * PAGE_SIZE must not move rows between pages under them (it applies to runs served later).
   */
  resultsPage(page, currentPageSize, resultsUrl, epoch) {
    const { run, ...refusal } = this.readable(epoch);
    if (!run) return refusal;
    const pageSize = run.page_size ?? currentPageSize;
    if (run.page_size === null) this.sql.exec("UPDATE run SET page_size = ? WHERE id = 1", pageSize);
    const start = (page - 1) * pageSize;
    const rows = this.sql.exec("SELECT body FROM rows WHERE position >= ? AND position < ? ORDER BY position", start, start + pageSize);
    const texts = rows.toArray().map((r) => r.body);
    return { body: resultsBody(texts, { page, pageSize, rowCount: run.row_count, resultsUrl }) };
  }

  /**
   * While the run goes: one bounded step (read what is new, store it with the cursor
   * atomically, plan the next). Once it ended: its deletion, RETENTION_DAYS later.
   */
  async alarm() {
    const run = this.load();
    if (!run) return;
    const config = settings(this.env);
    if (run.done) return this.expire(run, config);
    // A v4 run's safety net (its rows come by callbacks); v3 runs step below.
    if (await v4Alarm(this, run, config)) return;
    const wrong = config.problems.filter((p) => p.polling);
    if (wrong.length > 0) return this.holdForConfig(run, wrong.map((p) => p.message).join("; "));
    const step = await this.poll(run, config);
    if (step.configError) return this.holdForConfig(run, step.configError);
    const update = applyStep(run, step, config);
    const committed = this.commit(run, step, update);
    const now = this.load();
    if (!now) return; // deleted during the step: nothing was stored, nothing to plan
    if (!committed) return this.ctx.storage.setAlarm(Date.now());
    this.publish(run, now, step.results.slice(0, update.kept));
    if (update.done) return this.ctx.storage.setAlarm(now.finished_at + config.retentionMs);
    const delay = nextStepIn(update, step, config, Boolean(now.webhook));
    if (delay !== null) await this.ctx.storage.setAlarm(Date.now() + delay);
  }

  /**
   * An ended run is deleted RETENTION_DAYS after it ended: the registry forgets it first (a
   * failure there leaves the run whole, and the alarm is retried), then its storage goes.
   */
  async expire(run, config) {
    const at = (run.finished_at ?? Date.now()) + config.retentionMs;
    if (Date.now() < at) return this.ctx.storage.setAlarm(at);
    await registryOf(this.env).remove(run.job_uid);
    await this.erase();
    console.log(`run ${run.job_uid} deleted: it ended more than RETENTION_DAYS ago`);
  }

  async poll(run, config) {
    try {
      return await pollStep({
        ...connection(this.env),
        headers: { [STEP_HEADER]: `${run.job_uid}:${run.version + 1}` },
        jobUid: run.job_uid,
        cursor: run.cursor ?? undefined,
        maxRequests: config.stepRequests,
        deadlineMs: config.stepDeadlineMs,
        retry: config.retry,
        rowKey: config.rowKey,
        webhook: run.webhook ? JSON.parse(run.webhook) : undefined,
      });
    } catch (error) {
      // pollStep rejects invalid options with a TypeError naming the option (and maybe quoting
      // its value, which could be the project id): the setting is named, never its value.
      if (error instanceof ConfigError) return { configError: error.message };
      if (error?.name === "TypeError") return { configError: refusedSetting(error).message };
      console.error(`step of ${run.job_uid} could not start: ${redacted(this.env, error?.message ?? error)}`);
      return { results: [], cursor: run.cursor, status: run.status, done: false, error: { code: "BAD_RESPONSE", message: "the step could not start" }, requests: 0 };
    }
  }

  /**
   * A configuration fault: no request is made and nothing is counted as a failed step (it is
   * no outage, and waiting does not fix it). The run says which setting is wrong and waits for
   * the cron tick, whose kick steps it again once the setting is fixed (a deploy).
   */
  holdForConfig(run, message) {
    if (run.config_error !== message) {
      console.error(`worker configuration: run ${run.job_uid} is not polled until this is fixed: ${message}`);
      this.sql.exec("UPDATE run SET config_error = ? WHERE id = 1", message);
    }
  }

  /**
   * Stores the step's rows at their offsets and its cursor in one transaction, only if no
   * other step committed since this one read the run (then this one's rows are dropped and
   * the next step reads them again from the newer cursor): no row is lost or stored twice.
   * @returns {boolean} whether the step was committed
   */
  commit(before, step, update) {
    return this.ctx.storage.transactionSync(() => {
      const now = this.load();
      if (!now || now.version !== before.version) return false;
      step.results.slice(0, update.kept).forEach((row, i) => {
        this.sql.exec("INSERT INTO rows (position, body) VALUES (?, ?)", now.row_count + i, JSON.stringify(row));
      });
      // The webhook that this step carried is consumed; one that arrived meanwhile stays.
      const consumed = before.webhook !== null && now.webhook_gen === before.webhook_gen;
      this.sql.exec(
        `UPDATE run SET cursor = ?, status = ?, done = ?, error_code = ?, error_message = ?, row_count = ?,
           version = version + 1, failed_steps = ?, steps = steps + 1, finished_at = ?, webhook = ?, config_error = NULL
         WHERE id = 1`,
        update.cursor,
        update.status,
        update.done ? 1 : 0,
        update.errorCode,
        update.errorMessage,
        now.row_count + update.kept,
        update.failedSteps,
        update.done ? Date.now() : null,
        consumed || update.done ? null : now.webhook,
      );
      return true;
    });
  }
}
