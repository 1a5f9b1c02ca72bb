// A Captain Data v4 run in its RunTracker (the same store as a v3 run: the `run` row readers are
// served from, the `rows` table). Callbacks bring the rows, each batch stored once by its
// batch_uid; the alarm is the safety net: the run's status on a slow cadence while it is active,
// then its deliveries, replaying what never arrived, until every batch it can learn of is stored.
import { classifyV4Status } from "captaindata-poller";
import { matchesDigest, newTokenEpoch, secretDigest } from "./access.js";
import { ConfigError, settings } from "./config.js";
import { rowsUnderCap } from "./limits.js";
import { listDeliveries, readRun, replay } from "./v4-api.js";
import { reconcile } from "./v4-reconcile.js";
import { v4Settings } from "./v4-settings.js";

export const V4_SCHEMA = [
  // `final_from`: "callback" or "status", whichever said first that the run is over.
  // `callback_secret`: the SHA-256 (hex) of the run's own callback secret, never the secret.
  `CREATE TABLE IF NOT EXISTS v4_run (
     id INTEGER PRIMARY KEY CHECK (id = 1), action TEXT, status TEXT NOT NULL, final_status TEXT,
     final_from TEXT, final_error TEXT, settled_checks INTEGER NOT NULL, replays_sent INTEGER NOT NULL,
     callback_secret TEXT)`,
  // `digest`: the SHA-256 of the batch's rows as received, so a claim of the same batch_uid with other rows is told apart.
  "CREATE TABLE IF NOT EXISTS v4_batches (batch_uid TEXT PRIMARY KEY, position INTEGER NOT NULL, rows INTEGER NOT NULL, received_at INTEGER NOT NULL, digest TEXT)",
  // When the worker last replayed a batch: the next replay of it waits (REPLAY_PACE).
  "CREATE TABLE IF NOT EXISTS v4_replays (batch_uid TEXT PRIMARY KEY, last_at INTEGER NOT NULL)",
];
// The wait before a batch's next replay, in rechecks: 4 after the first, 16 after the second.
const REPLAY_PACE = 4;
// Batches the run's end message names at most (the count is always given).
const NAMED_LOST = 5;

// Columns added after the first v4 deployment: a run stored before them gets them on load.
const ADDED_V4_COLUMNS = {
  v4_run: { callback_secret: "TEXT" },
  v4_batches: { digest: "TEXT" },
};

function addV4Columns(tracker) {
  for (const [table, columns] of Object.entries(ADDED_V4_COLUMNS)) {
    const have = new Set(tracker.sql.exec(`SELECT name FROM pragma_table_info('${table}')`).toArray().map((c) => c.name));
    for (const [name, type] of Object.entries(columns)) if (!have.has(name)) tracker.sql.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
  }
}

/** The run's v4 state, or null when this tracker holds a v3 run (or nothing). */
function loadV4(tracker) {
  if (!tracker.hasTables()) return null;
  const exists = tracker.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'v4_run'").toArray().length > 0;
  if (!exists) return null;
  if (!tracker.v4ColumnsChecked) {
    for (const statement of V4_SCHEMA) tracker.sql.exec(statement);
    addV4Columns(tracker);
    tracker.v4ColumnsChecked = true;
  }
  return tracker.sql.exec("SELECT * FROM v4_run WHERE id = 1").toArray()[0] ?? null;
}

/** Creates the run's rows when the worker launched it. */
function insertRun(tracker, runUid, action, digest) {
  tracker.createTables();
  for (const statement of V4_SCHEMA) tracker.sql.exec(statement);
  addV4Columns(tracker);
  tracker.v4ColumnsChecked = true;
  tracker.sql.exec(
    `INSERT INTO run (id, job_uid, name, workflow_uid, cursor, status, done, row_count, version,
       webhook_gen, failed_steps, steps, created_at, token_epoch) VALUES (1, ?, ?, NULL, NULL, 'unknown', 0, 0, 0, 0, 0, 0, ?, ?)`,
    runUid,
    action,
    Date.now(),
    newTokenEpoch(),
  );
  tracker.sql.exec(
    "INSERT INTO v4_run (id, action, status, settled_checks, replays_sent, callback_secret) VALUES (1, ?, 'CREATED', 0, 0, ?)",
    action,
    digest,
  );
}

/**
 * Tracks a run the worker launched; its first status read is one interval away (the callbacks
 * come first). Idempotent. `secretDigest`: the digest of the callback secret its launch gave
 * Captain Data (the first one stored is kept). `epoch` is what the run's read tokens must name.
 * @returns {Promise<{ created: boolean, epoch: string }>}
 */
export async function trackV4(tracker, runUid, { action, secretDigest: digest }) {
  const run = tracker.load();
  if (run && loadV4(tracker)) {
    tracker.sql.exec("UPDATE run SET name = COALESCE(name, ?) WHERE id = 1", action);
    tracker.sql.exec("UPDATE v4_run SET action = COALESCE(action, ?), callback_secret = COALESCE(callback_secret, ?) WHERE id = 1", action, digest);
    return { created: false, epoch: tracker.tokenEpoch(run) };
  }
  if (run) throw new Error(`run ${runUid} is tracked already as a v3 run`);
  insertRun(tracker, runUid, action, digest);
  await tracker.ctx.storage.setAlarm(Date.now() + statusInterval(tracker.env));
  return { created: true, epoch: tracker.tokenEpoch(tracker.load()) };
}

/**
 * Stores one callback proved by `presented`, the run's own callback secret: its rows once per
 * batch_uid, after the rows stored so far (a replay or an identical duplicate adds nothing; the
 * same batch_uid with other rows is a conflict, refused and logged). A final status makes the
 * safety net check the deliveries soon. `seen` is `classifyV4Status(payload.run.status)`. A run
 * this worker does not store is not created: it may have been deleted (its rows must not come
 * back), or its callback beat the launch's answer (refused, the delivery fails, and the safety
 * net replays it once tracked). Any other secret (WEBHOOK_SECRET, another run's) is "forbidden".
 * @returns {Promise<"stored" | "duplicate" | "ended" | "unknown" | "forbidden" | "conflict">}
 */
export async function storeV4Callback(tracker, payload, seen, presented) {
  const { batch_uid: batchUid, status } = payload.run;
  if (!tracker.load()) return "unknown";
  const v4run = loadV4(tracker);
  // A v3 run of the same uid has no callback secret: nothing proves a callback for it.
  if (!v4run || !(await matchesDigest(presented, v4run.callback_secret))) return "forbidden";
  if (tracker.load().done) return "ended";
  const rows = Array.isArray(payload.results) ? payload.results : [];
  const digest = await secretDigest(JSON.stringify(rows));
  const final = seen.class === "succeeded" || seen.class === "failed";
  const { maxRowsPerRun } = settings(tracker.env);
  let capped = null;
  let kept = [];
  const before = tracker.load();
  const stored = tracker.ctx.storage.transactionSync(() => {
    const known = tracker.sql.exec("SELECT digest FROM v4_batches WHERE batch_uid = ?", batchUid).toArray()[0];
    // A batch stored before digests were kept (digest null) cannot be told apart: a duplicate.
    if (known) return known.digest && known.digest !== digest ? "conflict" : false;
    const run = tracker.load();
    const cap = rowsUnderCap(run.row_count, rows.length, maxRowsPerRun);
    rows.slice(0, cap.kept).forEach((row, i) => tracker.sql.exec("INSERT INTO rows (position, body) VALUES (?, ?)", run.row_count + i, JSON.stringify(row)));
    tracker.sql.exec(
      "INSERT INTO v4_batches (batch_uid, position, rows, received_at, digest) VALUES (?, ?, ?, ?, ?)",
      batchUid,
      run.row_count,
      cap.kept,
      Date.now(),
      digest,
    );
    tracker.sql.exec("UPDATE run SET row_count = row_count + ?, status = ?, version = version + 1 WHERE id = 1", cap.kept, seen.v3Status);
    capped = cap.error;
    kept = rows.slice(0, cap.kept);
    tracker.sql.exec("UPDATE v4_run SET status = ? WHERE id = 1", String(status));
    if (final) {
      tracker.sql.exec(
        "UPDATE v4_run SET final_status = COALESCE(final_status, ?), final_from = COALESCE(final_from, 'callback'), final_error = COALESCE(final_error, ?) WHERE id = 1",
        String(status),
        errorText(payload.error),
      );
    }
    return true;
  });
  if (stored === "conflict") {
    // Named without the rows (personal data) or any secret; the batch_uid quoted, bounded.
    console.error(`v4 run ${tracker.load().job_uid}: a callback claimed batch_uid ${JSON.stringify(batchUid)}, stored already with other rows: refused (409 BATCH_CONFLICT)`);
    return "conflict";
  }
  if (stored) publish(tracker, before, kept);
  // The rows cap: the run ends for good, its first rows kept and served (nothing dropped in silence).
  if (capped) {
    end(tracker, { status: null, code: capped.code, message: capped.message });
    await tracker.ctx.storage.setAlarm(Date.now() + settings(tracker.env).retentionMs);
    return "stored";
  }
  // The end: the deliveries are checked now.
  if (final) await tracker.ctx.storage.setAlarm(Date.now());
  return stored ? "stored" : "duplicate";
}

/** The status cadence; a wrong setting is the alarm's to report (it holds the run and says which). */
function statusInterval(env) {
  try {
    return v4Settings(env).statusIntervalMs;
  } catch {
    return 0;
  }
}

/** A callback's `error` (an object with `message`, or a string) as text, without anything else it holds. */
function errorText(error) {
  if (typeof error === "string") return error.slice(0, 500);
  if (error && typeof error === "object" && typeof error.message === "string") return error.message.slice(0, 500);
  return null;
}

/**
 * The safety net, one round per alarm of a run not ended yet. Returns false when this tracker
 * holds no v4 run (the v3 step runs instead). Once the run ends, its alarm is its deletion,
 * RETENTION_DAYS later (the tracker's `expire`).
 */
export async function v4Alarm(tracker, run, config) {
  const v4run = loadV4(tracker);
  if (!v4run) return false;
  if (run.done) return true;
  let settings;
  try {
    settings = v4Settings(tracker.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    tracker.holdForConfig(run, error.message);
    return true;
  }
  const next = await round(tracker, run, v4run, settings);
  const ended = tracker.load();
  if (!ended) return true; // deleted meanwhile
  await tracker.ctx.storage.setAlarm(next === null ? ended.finished_at + config.retentionMs : Date.now() + next);
  return true;
}

/** One round; resolves with the delay to the next one, or null when the run ended. */
async function round(tracker, run, v4run, settings) {
  if (!v4run.final_status) {
    const answer = await readRun(settings, run.job_uid);
    if (answer.status === 404) return end(tracker, { code: "NOT_FOUND", message: "Captain Data does not know this v4 run" });
    if (answer.status === 401 || answer.status === 403) {
      tracker.holdForConfig(run, `Captain Data refused the worker's v4 API key (HTTP ${answer.status})`);
      return settings.statusIntervalMs;
    }
    const status = answer.status === 200 ? answer.body?.status : undefined;
    // No usable answer (an outage, a rate limit): the next round reads again.
    if (typeof status !== "string") return settings.statusIntervalMs;
    const seen = await classifyV4Status(status);
    tracker.sql.exec("UPDATE v4_run SET status = ? WHERE id = 1", status);
    tracker.sql.exec("UPDATE run SET status = ?, config_error = NULL WHERE id = 1", seen.v3Status);
    if (seen.class !== "succeeded" && seen.class !== "failed") return settings.statusIntervalMs;
    const error = errorText(answer.body?.error);
    tracker.sql.exec("UPDATE v4_run SET final_status = ?, final_from = 'status', final_error = COALESCE(final_error, ?) WHERE id = 1", status, error);
  }
  return recover(tracker, loadV4(tracker), settings);
}

/** The run is over: replay what never arrived; end it once nothing more can come. */
async function recover(tracker, v4run, settings) {
  const listed = await listDeliveries(settings, tracker.load().job_uid);
  if (listed.error) return settings.recheckMs;
  const stored = new Set(tracker.sql.exec("SELECT batch_uid FROM v4_batches").toArray().map((b) => b.batch_uid));
  const lastReplay = new Map(tracker.sql.exec("SELECT batch_uid, last_at FROM v4_replays").toArray().map((r) => [r.batch_uid, r.last_at]));
  const now = Date.now();
  const due = (batchUid, replays) => !lastReplay.has(batchUid) || now >= lastReplay.get(batchUid) + settings.recheckMs * REPLAY_PACE ** replays;
  const plan = reconcile(listed.deliveries, stored, due);
  const batchOf = new Map(listed.deliveries.map((d) => [d.uid, d.batch_uid]));
  for (const deliveryUid of plan.replay) {
    const answer = await replay(settings, deliveryUid);
    if (answer.status < 200 || answer.status >= 300) continue; // listed again next round
    tracker.sql.exec("UPDATE v4_run SET replays_sent = replays_sent + 1 WHERE id = 1");
    tracker.sql.exec(
      "INSERT INTO v4_replays (batch_uid, last_at) VALUES (?, ?) ON CONFLICT (batch_uid) DO UPDATE SET last_at = excluded.last_at",
      batchOf.get(deliveryUid),
      Date.now(),
    );
  }
  if (plan.waiting.length > 0) return settings.recheckMs;
  // Over by its status alone (the final callback lost): the list may lag the end, so it must
  // say the same twice, one recheck apart, before the run ends for readers.
  if (v4run.final_from !== "callback" && v4run.settled_checks < 1) {
    tracker.sql.exec("UPDATE v4_run SET settled_checks = settled_checks + 1 WHERE id = 1");
    return settings.recheckMs;
  }
  const seen = await classifyV4Status(v4run.final_status);
  const lost = plan.lost.length === 0 ? null : lostMessage(plan.lost);
  if (lost) console.error(`v4 run ${tracker.load().job_uid}: ${lost}`);
  if (seen.errorCode) {
    const message = [v4run.final_error ?? `The run ended ${v4run.final_status}`, lost].filter(Boolean).join(". ");
    return end(tracker, { status: seen.v3Status, code: seen.errorCode, message });
  }
  return end(tracker, { status: seen.v3Status, code: null, message: lost });
}

function lostMessage(lost) {
  const named = lost.slice(0, NAMED_LOST).join(", ");
  const more = lost.length > NAMED_LOST ? ` and ${lost.length - NAMED_LOST} more` : "";
  return `The rows of ${lost.length} batch${lost.length === 1 ? "" : "es"} could not be recovered after 3 replays each (batch_uid ${named}${more})`;
}

/** Ends the run for readers. */
function end(tracker, { status, code, message }) {
  const before = tracker.load();
  tracker.sql.exec(
    `UPDATE run SET done = 1, status = COALESCE(?, status), error_code = ?, error_message = ?, finished_at = ?, version = version + 1,
       config_error = NULL WHERE id = 1`,
    status ?? null,
    code,
    message ?? null,
    Date.now(),
  );
  publish(tracker, before, []);
  return null;
}

/**
 * Tells the run's readers what a callback or the end changed: the RunTracker's `publish(before,
 * now, rows)` (the push stream's viewers), when it has one.
 */
function publish(tracker, before, rows) {
  const now = tracker.load();
  if (now && typeof tracker.publish === "function") tracker.publish(before, now, rows);
}
