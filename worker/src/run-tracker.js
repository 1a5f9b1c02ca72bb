// RunTracker: one Durable Object per tracked run. Its SQLite storage holds the cursor and the
// rows keyed by their offset; its alarm runs one pollStep per invocation (own subrequest budget).
import { DurableObject } from "cloudflare:workers";
import { pollStep } from "../../js/workerd.js";
import { ConfigError, connection, settings } from "./config.js";
import { applyStep, nextStepIn } from "./step-outcome.js";
import { acceptViewer, answerPings, publishCommit, viewerClosed, viewerMessage } from "./stream.js";
import { isMissing, resultsBody, runBody } from "./v3-shapes.js";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS run (
     id INTEGER PRIMARY KEY CHECK (id = 1), job_uid TEXT NOT NULL, name TEXT, workflow_uid TEXT,
     cursor TEXT, status TEXT NOT NULL, done INTEGER NOT NULL, error_code TEXT, error_message TEXT,
     row_count INTEGER NOT NULL, version INTEGER NOT NULL, webhook TEXT, webhook_gen INTEGER NOT NULL,
     failed_steps INTEGER NOT NULL, steps INTEGER NOT NULL, created_at INTEGER NOT NULL, finished_at INTEGER,
     page_size INTEGER, config_error TEXT)`,
  "CREATE TABLE IF NOT EXISTS rows (position INTEGER PRIMARY KEY, body TEXT NOT NULL)",
];
// Columns added after the first deployment: objects created before them get them on load.
const ADDED_COLUMNS = { page_size: "INTEGER", config_error: "TEXT" };

// Sent with every request of a step: lets logs (and tests) tell the steps' requests apart.
const STEP_HEADER = "x-poller-step";

export class RunTracker extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    for (const statement of SCHEMA) this.sql.exec(statement);
    const have = new Set(this.sql.exec("SELECT name FROM pragma_table_info('run')").toArray().map((c) => c.name));
    for (const [name, type] of Object.entries(ADDED_COLUMNS)) {
      if (!have.has(name)) this.sql.exec(`ALTER TABLE run ADD COLUMN ${name} ${type}`);
    }
    answerPings(ctx);
    this.awakeSince = Date.now();
  }

  /** For operators (and tests): the stream's viewers, and since when this instance is awake (it hibernates while idle). */
  streamStats() {
    return { viewers: this.ctx.getWebSockets().length, awakeSince: this.awakeSince };
  }

  /** `GET /v3/jobs/{uid}/stream`, authorised by the Worker: a viewer joins (worker/src/stream.js). */
  fetch(request) {
    const config = settings(this.env);
    return acceptViewer(this.ctx, this.sql, this.load(), request, { maxViewers: config.maxStreamViewers, pageSize: config.pageSize });
  }

  webSocketMessage(ws) {
    viewerMessage(ws);
  }

  webSocketClose(ws, code) {
    viewerClosed(ws, code);
  }

  webSocketError(ws) {
    viewerClosed(ws, 1011);
  }

  /** The stored run, or null when this object tracks nothing. */
  load() {
    return this.sql.exec("SELECT * FROM run WHERE id = 1").toArray()[0] ?? null;
  }

  /**
   * Starts tracking (idempotent) and steps at once, whatever the back-off of a run that is
   * tracked already (an operator tracking it again after an outage wants it read now). A run that
   * ended in an error (given up after MAX_FAILED_STEPS, or failed) is resumed from its cursor:
   * its stored rows are kept. A finished run is left as it is.
   * @returns {Promise<{ created: boolean, resumed: boolean }>}
   */
  async track(jobUid, info = {}) {
    const run = this.load();
    if (run) {
      if (run.done && !run.error_code) return { created: false, resumed: false };
      if (!run.done) {
        await this.ctx.storage.setAlarm(Date.now());
        return { created: false, resumed: false };
      }
      this.sql.exec(
        `UPDATE run SET done = 0, error_code = NULL, error_message = NULL, failed_steps = 0, finished_at = NULL,
           version = version + 1 WHERE id = 1`,
      );
      await this.ctx.storage.setAlarm(Date.now());
      return { created: false, resumed: true };
    }
    this.sql.exec(
      `INSERT INTO run (id, job_uid, name, workflow_uid, cursor, status, done, row_count, version,
         webhook_gen, failed_steps, steps, created_at) VALUES (1, ?, ?, ?, NULL, 'unknown', 0, 0, 0, 0, 0, 0, ?)`,
      jobUid,
      info.name ?? null,
      info.workflowUid ?? null,
      Date.now(),
    );
    await this.ctx.storage.setAlarm(Date.now());
    return { created: true, resumed: false };
  }

  /**
   * A cron sweep asks for a step now. Returns the run's state so the registry can retire it.
   * @returns {Promise<"active" | "done" | "unknown">}
   */
  async kick() {
    const run = this.load();
    if (!run) return "unknown";
    if (run.done) return "done";
    const at = await this.ctx.storage.getAlarm();
    // A run backing off after failed steps keeps its later alarm; a lost alarm is re-armed.
    if (at === null || (at > Date.now() && run.failed_steps === 0)) await this.ctx.storage.setAlarm(Date.now());
    return "active";
  }

  /**
   * A verified end webhook for this run: a hint to step now (the step reads the status and
   * drains the results; the run ends when the API says so). Duplicates only repeat that read
   * from the stored cursor, so they add no row twice.
   * @returns {Promise<"accepted" | "done" | "unknown">}
   */
  async webhook(payload) {
    const run = this.load();
    if (!run) return "unknown";
    if (run.done) return "done";
    this.sql.exec("UPDATE run SET webhook = ?, webhook_gen = webhook_gen + 1 WHERE id = 1", JSON.stringify(payload));
    await this.ctx.storage.setAlarm(Date.now());
    return "accepted";
  }

  /** `GET /jobs/{uid}` body, or null when not tracked. */
  runView() {
    const run = this.load();
    return run && { run: runBody(run), missing: isMissing(run) };
  }

  /**
   * `GET /jobs/{uid}/results?page=N` body (JSON text), or null when not tracked. The page size
   * the run was first served with is kept with it: readers' cursors hold `?page=N`, so a new
   * PAGE_SIZE must not move rows between pages under them (it applies to runs served later).
   */
  resultsPage(page, currentPageSize, resultsUrl) {
    const run = this.load();
    if (!run || isMissing(run)) return null;
    const pageSize = run.page_size ?? currentPageSize;
    if (run.page_size === null) this.sql.exec("UPDATE run SET page_size = ? WHERE id = 1", pageSize);
    const start = (page - 1) * pageSize;
    const rows = this.sql.exec("SELECT body FROM rows WHERE position >= ? AND position < ? ORDER BY position", start, start + pageSize);
    const texts = rows.toArray().map((r) => r.body);
    return resultsBody(texts, { page, pageSize, rowCount: run.row_count, resultsUrl });
  }

  /** One bounded step: read what is new, store it with the cursor atomically, plan the next. */
  async alarm() {
    const run = this.load();
    if (!run || run.done) return;
    const config = settings(this.env);
    const wrong = config.problems.filter((p) => p.polling);
    if (wrong.length > 0) return this.holdForConfig(run, wrong.map((p) => p.message).join("; "));
    const step = await this.poll(run, config);
    if (step.configError) return this.holdForConfig(run, step.configError);
    const update = applyStep(run, step, config);
    const committed = this.commit(run, step, update);
    if (committed) publishCommit(this.ctx, run, this.load(), step.results);
    const pending = Boolean(this.load()?.webhook);
    const delay = committed ? nextStepIn(update, step, config, pending) : 0;
    if (delay !== null) await this.ctx.storage.setAlarm(Date.now() + delay);
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
      // pollStep rejects invalid options with a TypeError naming the option: a setting is wrong.
      if (error instanceof ConfigError) return { configError: error.message };
      if (error?.name === "TypeError") return { configError: `The worker's settings were refused: ${error.message}` };
      console.error(`step of ${run.job_uid} could not start: ${error?.message ?? error}`);
      return { results: [], cursor: run.cursor, status: run.status, done: true, error: { code: "BAD_RESPONSE", message: "the step could not start" }, requests: 0 };
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
      step.results.forEach((row, i) => {
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
        now.row_count + step.results.length,
        update.failedSteps,
        update.done ? Date.now() : null,
        consumed || update.done ? null : now.webhook,
      );
      return true;
    });
  }
}
