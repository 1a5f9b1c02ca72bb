// A Captain Data v4 run in its RunTracker (the same store as a v3 run: the `run` row readers are
// served from, the `rows` table). Callbacks bring the rows, each batch stored once by its
// batch_uid; the alarm is the safety net: the run's status on a slow cadence while it is active,
// then its deliveries, replaying what never arrived, until every batch it can learn of is stored.
import { classifyV4Status } from "captaindata-poller";
import { matchesDigest, newTokenEpoch, secretDigest } from "./access.js";
import { ConfigError, settings } from "./config.js";
import { LISTED_MISSING_BATCHES, ROWS_MISSING, rowsUnderCap } from "./limits.js";
import { listDeliveries, MAX_PAGES, readRun, replay } from "./v4-api.js";
import { MAX_REPLAYS, reconcile } from "./v4-reconcile.js";
import { v4Settings } from "./v4-settings.js";

export const V4_SCHEMA = [
  // `final_from`: "callback" or "status", whichever said first that the run is over.
  // `callback_secret`: the SHA-256 (hex) of the run's own callback secret, never the secret.
  `CREATE TABLE IF NOT EXISTS v4_run (
     id INTEGER PRIMARY KEY CHECK (id = 1), action TEXT, status TEXT NOT NULL, final_status TEXT,
     final_from TEXT, final_error TEXT, settled_checks INTEGER NOT NULL, replays_sent INTEGER NOT NULL,
     callback_secret TEXT, rounds INTEGER, last_round_at INTEGER, next_round_at INTEGER, progress_at INTEGER)`,
  // `digest`: the SHA-256 of the batch's rows as received, so a claim of the same batch_uid with other rows is told apart.
  "CREATE TABLE IF NOT EXISTS v4_batches (batch_uid TEXT PRIMARY KEY, position INTEGER NOT NULL, rows INTEGER NOT NULL, received_at INTEGER NOT NULL, digest TEXT)",
  // Every batch the deliveries named that the worker did not have, in the order first seen; how
  // many replays of it the worker sent (`count`, failed requests included) and when the last
  // one went (`last_at`, 0: none yet): the next one waits (REPLAY_PACE), MAX_REPLAYS at most.
  "CREATE TABLE IF NOT EXISTS v4_replays (batch_uid TEXT PRIMARY KEY, last_at INTEGER NOT NULL, count INTEGER NOT NULL DEFAULT 0)",
];
// The wait before a batch's next replay, in rechecks: 4 after the first, 16 after the second.
const REPLAY_PACE = 4;
// Batches the run's end message names at most (the count is always given).
const NAMED_LOST = 5;
// Sent with every request of a round (as with a v3 step's): logs and tests tell the rounds apart.
const STEP_HEADER = "x-poller-step";

// Columns added after the first v4 deployment: a run stored before them gets them on load.
const ADDED_V4_COLUMNS = {
  v4_run: { callback_secret: "TEXT", rounds: "INTEGER", last_round_at: "INTEGER", next_round_at: "INTEGER", progress_at: "INTEGER" },
  v4_batches: { digest: "TEXT" },
  v4_replays: { count: "INTEGER NOT NULL DEFAULT 0" },
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
function insertRun(tracker, runUid, { action, digest, inputs }) {
  tracker.createTables();
  for (const statement of V4_SCHEMA) tracker.sql.exec(statement);
  addV4Columns(tracker);
  tracker.v4ColumnsChecked = true;
  tracker.sql.exec(
    `INSERT INTO run (id, job_uid, name, workflow_uid, cursor, status, done, row_count, version,
       webhook_gen, failed_steps, steps, created_at, token_epoch, number_inputs) VALUES (1, ?, ?, NULL, NULL, 'unknown', 0, 0, 0, 0, 0, 0, ?, ?, ?)`,
    runUid,
    action,
    Date.now(),
    newTokenEpoch(),
    inputs ?? null,
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
 * Captain Data (the first one stored is kept); `inputs`: how many inputs the launch sent (served
 * as `number_inputs`). `epoch` is what the run's read tokens must name.
 * @returns {Promise<{ created: boolean, epoch: string }>}
 */
export async function trackV4(tracker, runUid, { action, secretDigest: digest, inputs }) {
  const run = tracker.load();
  if (run && loadV4(tracker)) {
    tracker.sql.exec("UPDATE run SET name = COALESCE(name, ?), number_inputs = COALESCE(number_inputs, ?) WHERE id = 1", action, inputs ?? null);
    tracker.sql.exec("UPDATE v4_run SET action = COALESCE(action, ?), callback_secret = COALESCE(callback_secret, ?) WHERE id = 1", action, digest);
    return { created: false, epoch: tracker.tokenEpoch(run) };
  }
  if (run) throw new Error(`run ${runUid} is tracked already as a v3 run`);
  insertRun(tracker, runUid, { action, digest, inputs });
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
    // A new batch is progress: the safety net's give-up time starts again.
    tracker.sql.exec("UPDATE v4_run SET progress_at = ? WHERE id = 1", Date.now());
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
    const claimed = JSON.stringify(batchUid);
    console.error(`v4 run ${tracker.load().job_uid}: a callback claimed batch_uid ${claimed}, stored already with other rows: refused (409 BATCH_CONFLICT)`);
    return "conflict";
  }
  if (stored) publish(tracker, before, kept);
  // The rows cap: the run ends for good, its first rows kept and served (nothing dropped in silence).
  if (capped) {
    const missing = { batches: [], batch_count: 0, count: null, run_status: String(status) };
    end(tracker, { status: null, code: capped.code, message: capped.message, missing });
    await tracker.ctx.storage.setAlarm(Date.now() + settings(tracker.env).retentionMs);
    return "stored";
  }
  // The end: the deliveries are checked soon (at most one round per V4_RECHECK_MS: a flood of
  // duplicate finals brings the next round no earlier).
  if (final) await armNextRound(tracker);
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

/** V4_RECHECK_MS, or the default's when the setting is wrong (the alarm reports it). */
function recheckInterval(env) {
  try {
    return v4Settings(env).recheckMs;
  } catch {
    return 5000;
  }
}

/**
 * Brings the next round as early as allowed: now, but never earlier than one V4_RECHECK_MS after
 * the last round began, and never moving a round planned earlier than that. The planned time is
 * stored with the run (`next_round_at`), so repeated callbacks (or cron kicks) change nothing.
 */
async function armNextRound(tracker) {
  const v4run = loadV4(tracker);
  const at = Math.max(Date.now(), (v4run.last_round_at ?? 0) + recheckInterval(tracker.env));
  const planned = await tracker.ctx.storage.getAlarm();
  if (planned !== null && planned <= at) return;
  await planRound(tracker, at);
}

async function planRound(tracker, at) {
  tracker.sql.exec("UPDATE v4_run SET next_round_at = ? WHERE id = 1", at);
  await tracker.ctx.storage.setAlarm(at);
}

/**
 * A cron sweep's kick of a v4 run not ended: its next round as early as allowed (armNextRound).
 * Returns false when this tracker holds no v4 run.
 */
export async function kickV4(tracker) {
  if (!loadV4(tracker)) return false;
  await armNextRound(tracker);
  return true;
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
 * RETENTION_DAYS later (the tracker's `expire`). `config.stepRequests` (SUBREQUEST_BUDGET) bounds
 * the round's requests: the status read, the deliveries' pages and the replays together.
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
  const number = (v4run.rounds ?? 0) + 1;
  tracker.sql.exec("UPDATE v4_run SET rounds = ?, last_round_at = ?, next_round_at = NULL WHERE id = 1", number, Date.now());
  const budget = { left: config.stepRequests, headers: { [STEP_HEADER]: `${run.job_uid}:v4-${number}` } };
  const next = await round(tracker, run, loadV4(tracker), settings, budget);
  const ended = tracker.load();
  if (!ended) return true; // deleted meanwhile
  if (next === null) await tracker.ctx.storage.setAlarm(ended.finished_at + config.retentionMs);
  else await planRound(tracker, Date.now() + next);
  return true;
}

/** One round; resolves with the delay to the next one, or null when the run ended. */
async function round(tracker, run, v4run, settings, budget) {
  if (!v4run.final_status) {
    budget.left -= 1;
    const answer = await readRun(settings, run.job_uid, budget.headers);
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
    tracker.sql.exec(
      "UPDATE v4_run SET final_status = ?, final_from = 'status', final_error = COALESCE(final_error, ?), progress_at = ? WHERE id = 1",
      status,
      error,
      Date.now(),
    );
    // The budget spent on the status: the deliveries are listed at the next round.
    if (budget.left < 1) return settings.recheckMs;
  }
  return recover(tracker, loadV4(tracker), settings, budget);
}

/** The batches the worker knows of and does not have, in the order it first saw them missing. */
function unstoredBatches(tracker) {
  return tracker.sql
    .exec("SELECT batch_uid FROM v4_replays WHERE batch_uid NOT IN (SELECT batch_uid FROM v4_batches) ORDER BY rowid")
    .toArray()
    .map((r) => r.batch_uid);
}

/** Remembers the listed batches the worker does not have (their replays are counted from there). */
function rememberMissing(tracker, deliveries, stored) {
  for (const d of deliveries) {
    if (typeof d.batch_uid !== "string" || d.batch_uid === "" || stored.has(d.batch_uid)) continue;
    tracker.sql.exec("INSERT INTO v4_replays (batch_uid, last_at, count) VALUES (?, 0, 0) ON CONFLICT (batch_uid) DO NOTHING", d.batch_uid);
  }
}

/**
 * The run is over: replay what never arrived (within the round's budget, each batch at most
 * MAX_REPLAYS times by the worker's own count); end it once nothing more can come, or once
 * nothing came for V4_GIVE_UP_MS.
 */
async function recover(tracker, v4run, settings, budget) {
  const uid = tracker.load().job_uid;
  // One request of the budget is kept for a replay (when it has two or more).
  const pages = Math.min(MAX_PAGES, budget.left > 1 ? budget.left - 1 : 1);
  const listed = await listDeliveries(settings, uid, { maxPages: pages, headers: budget.headers });
  budget.left -= listed.requests;
  const stored = new Set(tracker.sql.exec("SELECT batch_uid FROM v4_batches").toArray().map((b) => b.batch_uid));
  if (!listed.error) rememberMissing(tracker, listed.deliveries, stored);
  const known = new Map(tracker.sql.exec("SELECT batch_uid, last_at, count FROM v4_replays").toArray().map((r) => [r.batch_uid, r]));
  const now = Date.now();
  const counted = (batchUid) => known.get(batchUid)?.count ?? 0;
  const due = (batchUid, replays) => counted(batchUid) === 0 || now >= known.get(batchUid).last_at + settings.recheckMs * REPLAY_PACE ** replays;
  const plan = listed.error ? null : reconcile(listed.deliveries, stored, due, counted);
  // A list longer than this round could read (2,000 deliveries, or the budget) is judged on what
  // it read, as a shorter one: what it did not show is not waited for.
  const settled = plan !== null && plan.waiting.length === 0;
  // A run over before the give-up time was kept has it from its first round here.
  if (v4run.progress_at === null) tracker.sql.exec("UPDATE v4_run SET progress_at = ? WHERE id = 1", now);
  if (!settled && now >= (v4run.progress_at ?? now) + settings.giveUpMs) return giveUp(tracker, v4run, settings);
  if (!settled) {
    if (plan) await replayDue(tracker, settings, budget, plan.replay, listed.deliveries);
    return settings.recheckMs;
  }
  // Over by its status alone (the final callback lost): the list may lag the end, so it must
  // say the same twice, one recheck apart, before the run ends for readers.
  if (v4run.final_from !== "callback" && v4run.settled_checks < 1) {
    tracker.sql.exec("UPDATE v4_run SET settled_checks = settled_checks + 1 WHERE id = 1");
    return settings.recheckMs;
  }
  const lost = unstoredBatches(tracker);
  return endOver(tracker, v4run, lost, lost.length === 0 ? null : lostMessage(lost));
}

/** Sends the replays due while the round's budget lasts; each one counted, answered or not. */
async function replayDue(tracker, settings, budget, deliveryUids, deliveries) {
  const batchOf = new Map(deliveries.map((d) => [d.uid, d.batch_uid]));
  for (const deliveryUid of deliveryUids) {
    if (budget.left < 1) return; // the rest at the next round
    budget.left -= 1;
    const answer = await replay(settings, deliveryUid, budget.headers);
    const sent = answer.status >= 200 && answer.status < 300;
    if (sent) tracker.sql.exec("UPDATE v4_run SET replays_sent = replays_sent + 1 WHERE id = 1");
    tracker.sql.exec(
      `INSERT INTO v4_replays (batch_uid, last_at, count) VALUES (?, ?, 1)
         ON CONFLICT (batch_uid) DO UPDATE SET last_at = excluded.last_at, count = count + 1`,
      batchOf.get(deliveryUid),
      Date.now(),
    );
  }
}

/** No progress for V4_GIVE_UP_MS: the run ends, every batch it knows it lacks named. */
function giveUp(tracker, v4run, settings) {
  const lost = unstoredBatches(tracker);
  const what = lost.length === 0 ? "its deliveries could not be checked" : lostMessage(lost, "could not be recovered");
  const message = `The worker gave up after ${settings.giveUpMs} ms without progress (V4_GIVE_UP_MS): ${what}`;
  return endOver(tracker, v4run, lost, message);
}

/**
 * Ends a run that is over: its own outcome, and the batches it lacks named. A run that failed
 * keeps its own code (its lost batches in the message); one that succeeded (in full or in part)
 * with batches missing, or that was given up, ends ROWS_MISSING: never served as finished.
 */
async function endOver(tracker, v4run, lost, lostText) {
  const seen = await classifyV4Status(v4run.final_status);
  if (lostText) console.error(`v4 run ${tracker.load().job_uid}: ${lostText}`);
  if (seen.errorCode) {
    const message = [v4run.final_error ?? `The run ended ${v4run.final_status}`, lostText].filter(Boolean).join(". ");
    return end(tracker, { status: seen.v3Status, code: seen.errorCode, message });
  }
  if (!lostText) return end(tracker, { status: seen.v3Status, code: null, message: null });
  const missing = { batches: lost.slice(0, LISTED_MISSING_BATCHES), batch_count: lost.length, count: null, run_status: String(v4run.final_status) };
  return end(tracker, { status: seen.v3Status, code: ROWS_MISSING, message: `${lostText} (${ROWS_MISSING}).`, missing });
}

function lostMessage(lost, why = `could not be recovered after ${MAX_REPLAYS} replays each`) {
  const named = lost.slice(0, NAMED_LOST).join(", ");
  const more = lost.length > NAMED_LOST ? ` and ${lost.length - NAMED_LOST} more` : "";
  return `The rows of ${lost.length} batch${lost.length === 1 ? "" : "es"} ${why} (batch_uid ${named}${more})`;
}

/** Ends the run for readers; `missing`: what it lacks, when it ended with rows missing (v3-shapes.js). */
function end(tracker, { status, code, message, missing = null }) {
  const before = tracker.load();
  tracker.sql.exec(
    `UPDATE run SET done = 1, status = COALESCE(?, status), error_code = ?, error_message = ?, finished_at = ?, version = version + 1,
       config_error = NULL, rows_missing = ? WHERE id = 1`,
    status ?? null,
    code,
    message ?? null,
    Date.now(),
    missing === null ? null : JSON.stringify(missing),
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
