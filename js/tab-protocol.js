// The tab-sharing protocol as a pure state machine, in the engine's shape: one tab's events in
// (lock grants, channel messages, its poller's batches and end, its page's visibility, its
// consumer's progress), effects out (posts, deliveries, role changes, "poll"/"stop polling",
// "pace"). No timers, no globals, no browser API: js/tabs-shared.js performs the effects, and
// tests/tab-protocol.test.mjs runs many tabs against a fake lock manager and channel. The
// messages and their shapes are in js/tab-messages.js.
//
// Rules:
// - One leader per run (the holder of the Web Lock) polls with a wasm poller; every other tab
//   follows the rows, statuses and outcome it posts. At most one poller per tab at a time.
// - A message is read only if it is well formed (js/tab-messages.js); rows, statuses and
//   outcomes only from a tab known to lead or to have led (it said so: `leader`, or `tab` with
//   `leads`). Anything else is ignored and counted in `ignored`.
// - Only the run's outcome travels: success, or a final error of the run (isFinalError).
//   Anything else ends the tab whose poller met it (its budget, time, retries, consumer, stop),
//   which leaves the lock to the next tab in line; that tab polls on from its own last row.
// - Budgets are per tab: `maxRequests` counts the requests this tab's pollers sent,
//   `maxDurationMs` runs from this tab's start(); so are a summary's `requests` and `retries`.
// - Every tab delivers its rows once, in order, from its own start, with backpressure: one
//   delivery at a time. It accepts at most `maxAhead` undelivered rows from the channel and
//   keeps `logRows` delivered ones to answer a tab that joins late; rows nobody keeps are read
//   from the API by the tab that misses them (a "reader": its own poller from its own cursor,
//   stopped as soon as it meets the shared stream).
// - The leader polls at the visible pace while any sharing tab is visible; only when every
//   tab is hidden does its poller take the hidden pace.

import { isFinalError } from "./error-codes.js";
import { CaptainDataError } from "./errors.js";
import { summary as summaryOf } from "./summary.js";
import { limitError } from "./tab-errors.js";
import { LOG_ROWS, MAX_AHEAD } from "./tab-limits.js";
import { wellFormed } from "./tab-messages.js";

export { LOG_ROWS, MAX_AHEAD };

/** What only a leader sends: read from a tab this tab knows leads or led. */
const FROM_LEADER = new Set(["batch", "status", "rows", "end"]);

/** The contiguous rows a tab knows: [base, end), with the cursor after `end`. */
class RowLog {
  constructor(offset, cursor) {
    this.base = offset;
    this.end = offset;
    this.cursor = cursor;
    this.rows = [];
  }

  /** Takes the rows of a batch past `end`; false when the batch starts after `end` (a gap). */
  accept(offset, results, cursor) {
    if (offset > this.end) return false;
    const fresh = results.slice(this.end - offset);
    if (fresh.length === 0) return true;
    this.rows.push(...fresh);
    this.end += fresh.length;
    this.cursor = cursor;
    return true;
  }

  slice(from, to = this.end) {
    return this.rows.slice(from - this.base, to - this.base);
  }

  /** Forgets delivered rows beyond the last `keep` rows. */
  trim(delivered, keep) {
    const drop = Math.min(delivered, this.end - keep) - this.base;
    if (drop <= 0) return;
    this.rows.splice(0, drop);
    this.base += drop;
  }
}

/** An outcome as it crosses the channel: a structured clone drops an Error's own fields. */
export function outcomeToWire({ summary, error }) {
  if (summary) return { summary: { ...summary } };
  const { message, code, status, runStatus } = error;
  return { error: { message, code, status, runStatus } };
}

function outcomeFromWire({ summary, error }) {
  if (summary) return { summary };
  const { code, message, status, runStatus } = error;
  return { error: new CaptainDataError(code, message, { status, runStatus }) };
}

/**
 * One tab's side of a shared poller. `handle(event, now)` returns the effects to perform, in
 * order. `now` is the clock in ms (only budgets read it).
 *
 * Events: `start {hidden}`, `queued` (another tab holds the lock), `lock` (granted),
 * `message {data}` (anything the channel brought: checked here), `polled {batch}` and
 * `polledStatus {run}` (this tab's poller), `pollEnded {summary} | {error}`, `delivered
 * {offset, cursor}`, `deliveryFailed {error}`, `visibility {hidden}`, `webhook {payload}`,
 * `timeout` (this tab's maxDurationMs), `abort {error}`, `stop`, `unload` (the page goes away).
 *
 * Effects: `{type: "post", message}`, `{type: "lock"}` (ask for the lock: leads at once when
 * free, else `queued`), `{type: "poll", cursor, maxRequests?, maxDurationMs?}`, `{type:
 * "stopPoll"}`, `{type: "pace", hidden}`, `{type: "webhook", payload}` (to this tab's poller),
 * `{type: "deliver", batch}`, `{type: "status", run}`, `{type: "role", role, tabs}`,
 * `{type: "release"}` (lock, lock request, channel), `{type: "ignored", why}` (a message not
 * read: `why` is "malformed" or "notFromLeader"), `{type: "end", outcome}` with outcome
 * `{summary}`, `{error}` or `{stopped: summary}` (a summary once this tab's poller has ended:
 * it brings its requests and retries).
 */
export class TabProtocol {
  role = "follower";
  ended = false;
  ignored = { malformed: 0, notFromLeader: 0 }; // messages not read (diagnostics, tests)
  delivered; // rows before this offset reached this tab's consumer
  cursor; // the cursor after the last delivered row
  #id;
  #options;
  #log; // the rows this tab knows
  #delivering = false;
  #stopping = false; // stop() came while a batch was with the consumer: end once it settles
  #known; // the furthest row end the leader told of
  #asked = null; // log.end when this tab last posted `want`
  #outcome = null; // { outcome, total }: the run's outcome
  #poller = null; // { reading, stopping }: this tab's wasm poller
  #pollAgain = null; // a reader to start once the stopping poller has ended
  #requests = 0; // requests of this tab's ended pollers
  #retries = 0; // and their retries
  #leaders = new Set(); // ids of the tabs that said they lead or led
  #ending = null; // a summary waiting for this tab's last poller to end (its figures)
  #startedAt = 0;
  #since; // the start() of a tab that polled alone before
  #hidden = false;
  #tabs = new Map(); // other tab id → hidden
  #paced = null; // the pace last given to the poller
  #told = "";
  #lastRun = null;
  #lastRunJson = "";
  #out = [];
  #now = 0;

  /**
   * A tab that polled the run alone before (js/tabs.js) brings `kept`, its last delivered rows
   * (those before `offset`), `requests` and `retries`, what it sent, and `startedAt`, when its
   * start() was.
   */
  constructor({ id, offset, cursor, kept = [], requests = 0, retries = 0, startedAt, maxRequests, maxDurationMs, logRows = LOG_ROWS, maxAhead = MAX_AHEAD }) {
    this.#id = id;
    this.#options = { maxRequests, maxDurationMs, logRows, maxAhead };
    this.#log = new RowLog(offset - kept.length, cursor);
    this.#log.accept(offset - kept.length, kept, cursor);
    this.#requests = requests;
    this.#retries = retries;
    this.#since = startedAt;
    this.delivered = this.#known = offset;
    this.cursor = cursor;
  }

  handle(event, now = 0) {
    this.#out = [];
    this.#now = now;
    if (!this.ended) this.#on(event);
    else if (event.type === "lock") this.#emit({ type: "release" }); // granted after the end
    else if (event.type === "pollEnded" && this.#ending) this.#endWith(this.#ending, event.summary);
    return this.#out;
  }

  #emit(effect) {
    this.#out.push(effect);
  }

  #post(message) {
    this.#emit({ type: "post", message: { ...message, from: this.#id } });
  }

  #on(event) {
    switch (event.type) {
      case "start":
        this.#startedAt = this.#since ?? this.#now;
        this.#hidden = Boolean(event.hidden);
        this.#post({ type: "tab", hidden: this.#hidden, leads: false, hello: true });
        return this.#emit({ type: "lock" });
      case "queued": // the lock is held by another tab: follow, and ask for what it has
        this.#tell();
        return this.#ask(true);
      case "lock":
        return this.#lead();
      case "message":
        return this.#onMessage(event.data);
      case "polled":
        return this.#polled(event.batch);
      case "polledStatus":
        if (this.role === "leader") this.#post({ type: "status", run: event.run });
        return this.#status(event.run);
      case "pollEnded":
        return this.#pollEnded(event);
      case "delivered":
        this.#delivering = false;
        this.delivered = event.offset;
        this.cursor = event.cursor;
        if (this.#stopping) return this.#finish({ stopped: true });
        return this.#progress();
      case "deliveryFailed": // after a stop(), the batch stays before the cursor: still a stop
        return this.#finish(this.#stopping ? { stopped: true } : { error: event.error });
      case "visibility":
        this.#hidden = event.hidden;
        this.#post({ type: "tab", hidden: this.#hidden, leads: this.role === "leader" });
        return this.#pace();
      case "webhook":
        if (this.#poller) this.#emit({ type: "webhook", payload: event.payload });
        if (this.role !== "leader") this.#post({ type: "webhook", payload: event.payload });
        return undefined;
      case "timeout":
        if (this.#stopping) return undefined; // stop() came first: it ends this tab
        return this.#finish({ error: limitError("TIMEOUT", this.#options) });
      case "abort":
        return this.#finish({ error: event.error });
      case "stop": // as a lone poller does: a batch with the consumer counts if it is taken
        if (!this.#delivering) return this.#finish({ stopped: true });
        this.#stopping = true;
        return this.#stopPoll();
      case "unload": // the page goes away: the others stop counting it (and its visibility)
        return this.#post({ type: "bye" });
      default:
        return undefined;
    }
  }

  #onMessage(m) {
    if (!wellFormed(m)) return this.#ignore("malformed");
    if (m.type === "rows" && m.to !== this.#id) return undefined; // another tab's answer
    if (FROM_LEADER.has(m.type) && !this.#leaders.has(m.from)) return this.#ignore("notFromLeader");
    switch (m.type) {
      case "tab":
        this.#tabs.set(m.from, m.hidden);
        if (m.leads) this.#leaders.add(m.from);
        if (m.hello) this.#post({ type: "tab", hidden: this.#hidden, leads: this.role === "leader" });
        this.#tell();
        return this.#pace();
      case "bye":
        this.#tabs.delete(m.from);
        this.#tell();
        return this.#pace();
      case "leader":
        this.#leaders.add(m.from);
        this.#asked = null; // the new leader may hold what the last one never answered
        return this.#progress();
      case "batch":
        return this.role === "leader" ? undefined : this.#shared(m.offset, m.results, m.cursor);
      case "status":
        return this.role === "leader" ? undefined : this.#status(m.run);
      case "want":
        return this.#answer(m);
      case "rows":
        return this.#answered(m);
      case "end":
        return this.#runEnded(m);
      default: // "webhook"
        if (this.role === "leader" && this.#poller) this.#emit({ type: "webhook", payload: m.payload });
        return undefined;
    }
  }

  /**
   * A message not read: malformed or of no known type, or rows, a status or an outcome from
   * a tab that never said it leads (a leader's batches posted before it answered this tab's
   * hello are among them: this tab asks for what it misses).
   */
  #ignore(why) {
    this.ignored[why] += 1;
    this.#emit({ type: "ignored", why });
  }

  // ---- leading -------------------------------------------------------------------------------

  #lead() {
    this.role = "leader";
    this.#tell();
    this.#post({ type: "leader" });
    if (this.#poller) this.#poller.reading = false; // this tab's reader polls on as the leader's
    this.#progress();
  }

  /** Starts this tab's poller from its last known row, with what is left of its budgets. */
  #poll(reading) {
    if (this.#poller) {
      if (this.#poller.stopping) this.#pollAgain = reading;
      return undefined;
    }
    const { maxRequests, maxDurationMs } = this.#options;
    const left = {};
    if (maxRequests !== undefined) left.maxRequests = maxRequests - this.#requests;
    if (maxDurationMs !== undefined) left.maxDurationMs = maxDurationMs - (this.#now - this.#startedAt);
    if (left.maxRequests <= 0) return this.#finish({ error: limitError("BUDGET_EXHAUSTED", this.#options) });
    if (left.maxDurationMs <= 0) return this.#finish({ error: limitError("TIMEOUT", this.#options) });
    this.#poller = { reading, stopping: false };
    this.#paced = null;
    this.#emit({ type: "poll", cursor: this.#log.cursor, ...left });
    return this.#pace();
  }

  #stopPoll() {
    if (!this.#poller || this.#poller.stopping) return;
    this.#poller.stopping = true;
    this.#emit({ type: "stopPoll" });
  }

  /** Hidden pace only when this tab and every other sharing tab are hidden. */
  #pace() {
    if (!this.#poller || this.#poller.stopping) return;
    const hidden = this.#hidden && [...this.#tabs.values()].every(Boolean);
    if (hidden === this.#paced) return;
    this.#paced = hidden;
    this.#emit({ type: "pace", hidden });
  }

  #polled({ offset, results, cursor }) {
    if (!this.#poller || this.#poller.stopping) return;
    if (this.role === "leader") this.#post({ type: "batch", offset, results, cursor });
    this.#known = Math.max(this.#known, offset + results.length);
    this.#log.accept(offset, results, cursor);
    // A reader that has met the rows the leader told of is done: the channel has the rest.
    if (this.#poller.reading && this.#log.end >= this.#known) this.#stopPoll();
    this.#progress();
  }

  #pollEnded({ summary, error }) {
    const { stopping } = this.#poller ?? {};
    this.#poller = null;
    this.#count(summary);
    // Asked to stop, it may still have ended on its own first: an error is its outcome then
    // (an error carries no count of requests; counted as stopped, the tab would poll again
    // with a budget it had spent).
    if (summary?.status === "stopped" || (stopping && !error)) {
      const again = this.#pollAgain;
      this.#pollAgain = null;
      if (again !== null && this.role !== "leader") this.#poll(again);
      return this.#progress();
    }
    if (summary || isFinalError(error)) {
      const total = this.#log.end;
      const outcome = summary ? { summary } : { error };
      if (this.role === "leader") this.#post({ type: "end", outcome: outcomeToWire(outcome), total });
      this.#outcome = { outcome, total }; // what this tab read itself is what it delivers
      return this.#progress();
    }
    // This tab's own limit or failure: it ends here, and the lock goes to the next tab. The
    // poller was given what was left of a budget: the error names the tab's own.
    const { maxRequests, maxDurationMs } = this.#options;
    const limit = error?.code === "BUDGET_EXHAUSTED" ? maxRequests : error?.code === "TIMEOUT" ? maxDurationMs : undefined;
    return this.#finish({ error: limit === undefined ? error : limitError(error.code, this.#options) });
  }

  // ---- following -----------------------------------------------------------------------------

  /** A batch of the leader's: taken when it starts at or before this tab's last row. */
  #shared(offset, results, cursor) {
    this.#known = Math.max(this.#known, offset + results.length);
    const room = this.#log.end - this.delivered < this.#options.maxAhead;
    if (room && this.#log.accept(offset, results, cursor) && this.#poller?.reading) this.#stopPoll();
    this.#progress();
  }

  /** The leader's answer to this tab's `want`. */
  #answered({ offset, results, cursor, known, run, end }) {
    this.#known = Math.max(this.#known, known);
    if (run) this.#status(run);
    if (end) this.#runEnded(end);
    if (this.#log.accept(offset, results, cursor)) return this.#progress();
    // Nobody keeps the rows in between: this tab reads them from the API itself.
    return this.#poll(true);
  }

  #answer({ from, next }) {
    if (this.role !== "leader") return;
    const offset = Math.min(Math.max(next, this.#log.base), this.#log.end);
    const end = this.#outcome && { outcome: outcomeToWire(this.#outcome.outcome), total: this.#outcome.total };
    this.#post({
      type: "rows",
      to: from,
      offset,
      results: this.#log.slice(offset),
      cursor: this.#log.cursor,
      known: this.#known,
      run: this.#lastRun,
      end,
    });
  }

  /** Posts `want` for the rows after the last known one (once per position, or when forced). */
  #ask(force = false) {
    if (!force && this.#asked === this.#log.end) return;
    this.#asked = this.#log.end;
    this.#post({ type: "want", next: this.#log.end });
  }

  #runEnded({ outcome, total }) {
    if (this.#outcome) return;
    const received = outcomeFromWire(outcome);
    if (received.error && !isFinalError(received.error)) return; // never another tab's own end
    this.#outcome = { outcome: received, total };
    this.#known = Math.max(this.#known, total);
    this.#progress();
  }

  #status(run) {
    const json = JSON.stringify(run); // a new leader reads the status again: not news here
    if (json === this.#lastRunJson) return;
    this.#lastRunJson = json;
    this.#lastRun = run;
    this.#emit({ type: "status", run });
  }

  // ---- delivery and the end -----------------------------------------------------------------

  /** After every change: deliver what is known, fetch what is missing, end when all is in. */
  #progress() {
    if (this.ended || this.#stopping) return;
    const log = this.#log;
    if (!this.#delivering && this.delivered < log.end) {
      this.#delivering = true;
      const batch = { offset: this.delivered, results: log.slice(this.delivered), cursor: log.cursor };
      this.#emit({ type: "deliver", batch });
    }
    log.trim(this.delivered, this.#options.logRows);
    const total = this.#outcome?.total;
    if (this.#outcome && !this.#delivering && this.delivered >= total) return this.#finish(this.#outcome.outcome, total);
    const missing = log.end < Math.max(this.#known, total ?? 0);
    if (this.#poller) {
      // Everything is in, or the run is over and this poller adds nothing: stop it.
      if (this.#outcome && !missing) this.#stopPoll();
      return undefined;
    }
    if (this.role === "leader") {
      if (!this.#outcome || missing) this.#poll(false);
      return undefined;
    }
    if (missing && log.end - this.delivered < this.#options.maxAhead) this.#ask();
    return undefined;
  }

  /**
   * Ends this tab once: its poller stops, the others hear it left, everything is released.
   * A success or a stop is told with this tab's own figures (`{summary}`, `{stopped}`), once
   * a poller still running has ended and brought its requests and retries.
   */
  #finish({ summary, error, stopped }, total = this.delivered) {
    if (this.ended) return;
    this.#stopPoll();
    this.ended = true;
    this.#post({ type: "bye" });
    this.#emit({ type: "release" });
    if (error) return this.#emit({ type: "end", outcome: { error } });
    // An incomplete end keeps what the run lacks (`missing`), whichever tab read it.
    const lacking = !stopped && summary.missing ? { missing: summary.missing } : {};
    const ending = { stopped, status: stopped ? "stopped" : summary.status, totalResults: total, ...lacking };
    if (this.#poller) this.#ending = ending;
    else this.#endWith(ending);
  }

  /** The summary of a success or a stop, with the figures of `last`, the poller that just ended. */
  #endWith({ stopped, status, ...figures }, last) {
    this.#ending = null;
    this.#count(last);
    const [requests, retries, durationMs] = [this.#requests, this.#retries, this.#now - this.#startedAt];
    const own = summaryOf({ status, ...figures, requests, retries, durationMs, cursor: this.cursor });
    this.#emit({ type: "end", outcome: stopped ? { stopped: own } : { summary: own } });
  }

  /** Adds what an ended poller of this tab sent (a summary; an error carries no count). */
  #count(summary) {
    this.#requests += summary?.requests ?? 0;
    this.#retries += summary?.retries ?? 0;
  }

  /** onRoleChange: the role and the number of tabs sharing, when either changed. */
  #tell() {
    const tabs = this.#tabs.size + 1;
    const now = `${this.role} ${tabs}`;
    if (now === this.#told) return;
    this.#told = now;
    this.#emit({ type: "role", role: this.role, tabs });
  }
}
