// The deliveries of v4 callbacks: each batch of a run is one delivery, POSTed to the run's
// callback URL with its headers when due; a replay is a new delivery of the same batch. The
// seeded fault plan decides which are lost, delayed, duplicated, reordered or unacknowledged.
import { hashString, seededRandom } from "./random.js";
import { callbackBody } from "./v4-runs.js";

export const MAX_REPLAYS = 3;
export const DELIVERY_STATUSES = Object.freeze(["PENDING", "RUNNING", "FAILED", "SUCCESS"]);
const RATES = ["lostRate", "duplicateRate", "reorderRate", "delayRate", "unacknowledgedRate", "replayLostRate"];

/**
 * Checks a v4 fault plan's shape (a typo fails loudly).
 * @param {import("./v4-runs.js").V4FaultPlan} plan
 */
export function validateV4Faults(plan) {
  if (plan === null || typeof plan !== "object") throw new TypeError("Expected v4 `faults` to be an object");
  for (const name of RATES) {
    const v = plan[name];
    if (v !== undefined && !(typeof v === "number" && v >= 0 && v <= 1)) {
      throw new TypeError(`Expected v4 \`faults.${name}\` to be a probability in [0, 1] (got ${v})`);
    }
  }
  for (const name of ["delayMs", "lostStatus"]) {
    const v = plan[name];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw new TypeError(`Expected v4 \`faults.${name}\` to be an integer ≥ 0`);
  }
  if (plan.finalLost !== undefined && typeof plan.finalLost !== "boolean") throw new TypeError("Expected v4 `faults.finalLost` to be a boolean");
  const known = new Set([...RATES, "delayMs", "lostStatus", "finalLost"]);
  const unknown = Object.keys(plan).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new TypeError(`Unknown v4 fault ${unknown.join(", ")}`);
}

/** The faults of one callback: one draw per fault, always, so one rate never reshuffles another's dice. */
function drawFaults(plan, random, final) {
  const roll = () => random();
  const [lost, duplicate, reorder, delay, unacknowledged] = [roll(), roll(), roll(), roll(), roll()];
  return {
    lost: lost < (plan.lostRate ?? 0) || (final && plan.finalLost === true),
    duplicate: duplicate < (plan.duplicateRate ?? 0),
    reorder: !final && reorder < (plan.reorderRate ?? 0),
    delayMs: delay < (plan.delayRate ?? 0) ? (plan.delayMs ?? 1000) : 0,
    unacknowledged: unacknowledged < (plan.unacknowledgedRate ?? 0),
  };
}

const iso = (ms) => new Date(ms).toISOString();

/**
 * @param {{ clock: { now(): number }, uid: () => string, changed: () => void, wake: (at: number) => void,
 *   workspaceUid: string, seed: number }} context
 *   `wake(at)`: asks for a `send()` at that time (a timer with the wall clock; a manual clock's tick does it).
 */
export function createDeliveries({ clock, uid, changed, wake, workspaceUid, seed }) {
  /** @type {Map<string, object>} uid → delivery (the record the API shows, plus what the sim needs) */
  let deliveries = new Map();
  let order = 0;
  let made = 0; // deliveries made so far: ties in a sort keep this order
  /** Every POST made: `{ t, runUid, batchUid, deliveryUid, replay, duplicate, status, error }`. */
  let posts = [];
  /** Windows of simulated time in which the receiver is down: `[from, until)`. */
  let down = [];
  const inFlight = new Set();
  const dice = new Map(); // run uid → its seeded random

  const randomOf = (run) => {
    if (!dice.has(run.uid)) dice.set(run.uid, seededRandom((seed ^ hashString(`callbacks:${run.uid}`)) >>> 0));
    return dice.get(run.uid);
  };

  function record(run, batch, { parent = null, sendAt, seq, faults }) {
    const d = {
      uid: uid(),
      parent_uid: parent?.uid ?? null,
      retry_count: parent ? parent.replays + 1 : 0,
      created_at: iso(batch.dueAt),
      updated_at: iso(batch.dueAt),
      status: "PENDING",
      callback_url: run.callback.url,
      http_status: null,
      batch_uid: batch.batchUid,
      run_uid: run.uid,
      workspace_uid: workspaceUid,
      // Not shown by the API:
      made: made++,
      run,
      batch,
      sendAt,
      seq,
      faults,
      replays: 0,
    };
    deliveries.set(d.uid, d);
    return d;
  }

  /** Plans the first delivery of every batch of a new run (sent when due, with its faults). */
  function plan(run) {
    const random = randomOf(run);
    const planned = run.batches.map((batch) => ({ batch, faults: drawFaults(run.spec.faults, random, batch.final) }));
    planned.forEach((p, i) => {
      const next = planned[i + 1];
      // Reordered: sent just after the next batch (same instant, later in line).
      const at = p.faults.reorder && next ? next.batch.dueAt : p.batch.dueAt;
      const seq = p.faults.reorder && next ? order + i + 1.5 : order + i;
      p.delivery = record(run, p.batch, { sendAt: at + p.faults.delayMs, seq, faults: p.faults });
      wake(p.delivery.sendAt);
    });
    order += planned.length + 1;
  }

  /** Drops the deliveries of batches a stopped run never produced; plans its new final one. */
  function replan(run, dropped) {
    const gone = new Set(dropped.map((b) => b.batchUid));
    for (const d of [...deliveries.values()]) {
      if (d.run === run && d.status === "PENDING" && (gone.has(d.batch_uid) || d.batch.final)) deliveries.delete(d.uid);
    }
    const final = run.batches.at(-1);
    const faults = drawFaults(run.spec.faults, randomOf(run), true);
    const d = record(run, final, { sendAt: clock.now() + faults.delayMs, seq: order++, faults });
    wake(d.sendAt);
  }

  const isDown = (t) => down.some(([from, until]) => t >= from && t < until);

  function settle(d, status, httpStatus) {
    d.status = status;
    d.http_status = httpStatus;
    d.updated_at = iso(clock.now());
    changed();
  }

  /** One POST of a delivery's callback; resolves with the receiver's status, or null with no answer. */
  function post(d, duplicate) {
    const entry = { t: clock.now(), runUid: d.run_uid, batchUid: d.batch_uid, deliveryUid: d.uid, replay: d.parent_uid !== null, duplicate, status: null, error: null };
    posts.push(entry);
    const { callback } = d.run;
    return fetch(callback.url, {
      method: "POST",
      // A connection per callback, as a webhook sender opens (a kept-alive one may have been closed meanwhile).
      headers: { "content-type": "application/json", connection: "close", ...callback.headers },
      body: JSON.stringify(callbackBody(d.run, d.batch)),
    })
      .then(async (res) => {
        entry.status = res.status;
        await res.arrayBuffer();
        return res.status;
      })
      .catch((e) => {
        entry.error = String(e?.message ?? e);
        return null;
      });
  }

  /** Sends one delivery now: lost or refused by a receiver that is down, or POSTed (twice when duplicated). */
  async function deliver(d) {
    d.status = "RUNNING";
    d.updated_at = iso(clock.now());
    changed();
    const { faults } = d;
    if (faults.lost) return settle(d, "FAILED", d.run.spec.faults.lostStatus ?? 502);
    if (isDown(clock.now())) return settle(d, "FAILED", 503);
    const status = await post(d, false);
    if (faults.duplicate) await post(d, true);
    if (faults.unacknowledged) return settle(d, "FAILED", null);
    settle(d, status !== null && status >= 200 && status < 300 ? "SUCCESS" : "FAILED", status);
  }

  /** Sends every delivery that is due, in line (due time, then planned order). */
  function send() {
    const now = clock.now();
    const due = [...deliveries.values()].filter((d) => d.status === "PENDING" && d.sendAt <= now);
    due.sort((a, b) => a.sendAt - b.sendAt || a.seq - b.seq);
    for (const d of due) {
      const sending = deliver(d).finally(() => {
        inFlight.delete(sending);
        changed();
      });
      inFlight.add(sending);
    }
  }

  /**
   * Replays an original delivery: a new one of the same batch, sent now. Throws a
   * `{ status, label, message }` problem when it cannot be replayed.
   */
  function replay(deliveryUid) {
    const original = deliveries.get(deliveryUid);
    if (!original || !visible(original)) throw { status: 404, label: "NOT_FOUND", message: "Run callback not found" };
    if (original.parent_uid !== null) {
      throw { status: 400, label: "BAD_REQUEST", message: "Only the original callback can be replayed, not a replay" };
    }
    if (original.replays >= MAX_REPLAYS) {
      throw { status: 400, label: "REPLAY_LIMIT_REACHED", message: `A callback can be replayed at most ${MAX_REPLAYS} times` };
    }
    const random = randomOf(original.run);
    const lost = random() < (original.run.spec.faults.replayLostRate ?? 0);
    const faults = { lost, duplicate: false, reorder: false, delayMs: 0, unacknowledged: false };
    const now = clock.now();
    const d = record(original.run, { ...original.batch, dueAt: now }, { parent: original, sendAt: now, seq: order++, faults });
    original.replays += 1;
    send();
    return shown(d);
  }

  // A delivery exists once its batch is produced (a delayed one is PENDING until sent).
  const visible = (d) => d.batch.dueAt <= clock.now();

  /** What the API shows of a delivery. */
  function shown(d) {
    const { made: _made, run, batch, sendAt, seq, faults, replays, ...visible } = d;
    return visible;
  }

  const SORTABLE = new Set(["created_at", "updated_at", "status", "retry_count"]);

  /**
   * `GET /v4/runs/callbacks`: filtered by `run_uid` and `status`, sorted (`-` for descending),
   * `limit` (default 10, at most 100) from `offset`. Throws a problem on a bad parameter.
   */
  function list({ runUid, status, limit, offset, sort }) {
    if (status !== null && !DELIVERY_STATUSES.includes(status)) {
      throw { status: 400, label: "BAD_REQUEST", message: `\`status\` must be one of ${DELIVERY_STATUSES.join(", ")}` };
    }
    const n = limit === null ? 10 : Number(limit);
    const from = offset === null ? 0 : Number(offset);
    if (!Number.isInteger(n) || n < 1 || n > 100) throw { status: 400, label: "BAD_REQUEST", message: "`limit` must be an integer from 1 to 100" };
    if (!Number.isInteger(from) || from < 0) throw { status: 400, label: "BAD_REQUEST", message: "`offset` must be an integer ≥ 0" };
    const key = (sort ?? "created_at").replace(/^-/, "");
    if (!SORTABLE.has(key)) throw { status: 400, label: "BAD_REQUEST", message: `\`sort\` must be one of ${[...SORTABLE].join(", ")} (- for descending)` };
    const sign = sort?.startsWith("-") ? -1 : 1;
    const matching = [...deliveries.values()].filter((d) => visible(d) && (runUid === null || d.run_uid === runUid) && (status === null || d.status === status));
    // Ties keep the order the deliveries were made in (reversed by a `-` sort).
    matching.sort((a, b) => sign * (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : a.made - b.made));
    return { total: matching.length, items: matching.slice(from, from + n).map(shown) };
  }

  return {
    plan,
    replan,
    send,
    replay,
    list,
    /** One delivery as the API shows it, or null. */
    get: (deliveryUid) => {
      const d = deliveries.get(deliveryUid);
      return d && visible(d) ? shown(d) : null;
    },
    /** Every delivery (all runs, or one), as the API shows them, in the order they were made. */
    all: (runUid) => [...deliveries.values()].filter((d) => visible(d) && (!runUid || d.run_uid === runUid)).map(shown),
    /** Every POST made, oldest first. */
    posts: (runUid) => posts.filter((p) => !runUid || p.runUid === runUid).map((p) => ({ ...p })),
    /** The receiver is down from `from` for `ms` of simulated time: deliveries meanwhile fail (503). */
    receiverDown(ms, from = clock.now()) {
      down.push([from, from + ms]);
      wake(from + ms);
    },
    /** Resolves once no delivery is being sent (duplicates and replays sent meanwhile included). */
    async settled() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    reset() {
      deliveries = new Map();
      posts = [];
      down = [];
      dice.clear();
      order = 0;
    },
  };
}
