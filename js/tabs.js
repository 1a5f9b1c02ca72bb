// One poller shared by every tab of an origin that polls the same run (browsers only).
//
// The tabs elect a leader with a Web Lock named after the run; only the leader runs the wasm
// JobPoller and talks to the API. It posts what it receives on a BroadcastChannel of the same
// name, and every tab (the leader too) hands rows to its own callbacks through one path: a row
// log per tab, contiguous from where this tab started, delivered in order exactly once. The
// log is also what a leader serves to tabs that join late. When the leader stops or its tab
// closes, the lock passes to the next tab, which polls on from the cursor of its last row.
// After a terminal outcome the leader keeps the lock (until stop() or its tab closes) so that
// a tab opened then gets the rows and the outcome instead of polling the run again.
//
// Messages on the channel (never the API key, the headers or any option):
//   want    {from, next}                        a follower needs rows from `next` (it joined, or a gap)
//   rows    {to, offset, results, cursor, run, end}  the leader's answer: its rows, status, outcome
//   batch   {offset, results, cursor}           new rows the leader received
//   status  {run}                               the run's status changed
//   end     {outcome: {summary}|{error}, total} the run's outcome (never the leader's own stop)
//   leader  {from}                              a tab took over the polling
//   webhook {payload}                           a follower relays webhookReceived() to the leader
//   bye     {from}                              a tab stopped (tab counts)

import { abortedError } from "./errors.js";

const DEFAULT_BASE_URL = "https://api.captaindata.co/v3";
const noop = () => {};

/**
 * The sharing hook of the public JobPoller (js/poller.js): a shared poller for `options`, or
 * null (no Web Locks or BroadcastChannel, or `shareAcrossTabs: false`) when the lone wasm
 * poller is used. Rows and statuses go to `delivery` (js/delivery.js); the public class
 * reports the outcome.
 */
export function shareAcrossTabs(options, { WasmJobPoller, delivery }) {
  // The wasm poller with callbacks given as options (how this layer builds its pollers).
  function Inner(opts) {
    return new WasmJobPoller(opts, { batch: (batch) => opts.onBatch?.(batch), status: (run) => opts.onStatus?.(run) });
  }
  if (!wantsSharing(options)) return null;
  const probe = new Inner(options); // validates every option of the wasm poller; inert until start()
  // Where this tab's rows start (the row after its cursor): it takes shared rows from there.
  const routed = {
    ...options,
    onBatch: (batch) => delivery.batch(batch),
    onStatus: (run) => delivery.status(run),
    onComplete: undefined,
    onError: undefined,
    onCallbackError: (error, name) => delivery.report(error, name),
  };
  return new TabShare(Inner, routed, probe, probe._offset);
}

/** Checks the two options of this layer; the role of a poller until it is built. */
export function sharingRole(options) {
  return wantsSharing(options) ? "follower" : "alone";
}

/** Checks the two options of this layer; true when this runtime can share a poller. */
function wantsSharing({ shareAcrossTabs = true, onRoleChange }) {
  if (typeof shareAcrossTabs !== "boolean") {
    throw new TypeError(`Expected \`shareAcrossTabs\` to be a boolean (got ${describe(shareAcrossTabs)})`);
  }
  if (onRoleChange !== undefined && typeof onRoleChange !== "function") {
    throw new TypeError(`Expected \`onRoleChange\` to be a function (got ${describe(onRoleChange)})`);
  }
  return shareAcrossTabs && typeof BroadcastChannel === "function" && typeof navigator === "object" && Boolean(navigator.locks);
}

/** How a refused value is shown in a TypeError, as the wasm poller shows it. */
function describe(value) {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  return typeof value === "object" && value !== null ? "an object" : String(value);
}

/** `https://host/v3/` and `https://host/v3` poll the same API: one name for both. */
function channelName({ baseUrl = DEFAULT_BASE_URL, jobUid }) {
  let base = baseUrl;
  try {
    base = new URL(baseUrl).href.replace(/\/+$/, "");
  } catch {
    // validated by the wasm poller already; keep the text as it is
  }
  return `captaindata-poller/1 ${base} ${jobUid}`;
}

/** The terminal error for a stop (reported as stopped by js/poller.js) or an aborted signal. */
const abortError = abortedError;

/** An outcome as it crosses the channel: Error objects lose `code` in a structured clone. */
function toWire({ summary, error }) {
  if (summary) return { summary: { ...summary } };
  const { name, message, code, status, runStatus } = error;
  return { error: { name, message, code, status, runStatus } };
}

function fromWire({ summary, error }) {
  if (summary) return { summary };
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name;
  rebuilt.code = error.code;
  if (error.status !== undefined) rebuilt.status = error.status;
  if (error.runStatus !== undefined) rebuilt.runStatus = error.runStatus;
  return { error: rebuilt };
}

/** One tab's side of a shared poller. */
class TabShare {
  role = "follower";
  #Inner;
  #options;
  #probe; // the validated, never started wasm poller: its cursor is where this tab starts
  #key;
  #id = crypto.randomUUID();
  // The rows this tab knows, contiguous from #base; #rows[i] is row #base + i.
  #base;
  #rows = [];
  #endCursor; // the cursor after the last known row: where a new leader polls on from
  #ahead = new Map(); // offset → batch that arrived before the rows in front of it
  #asked = null; // #knownEnd when this tab last asked for missing rows
  #delivered; // rows before this offset went to onBatch and the iterator
  #cursor; // poller.cursor: the cursor after the last delivered row
  #pumping = false;
  #waiters = []; // the leader's poller waits for this tab's consumer (backpressure)
  #sink = null;
  #lastRun = null;
  #lastRunJson = "";
  #end = null; // { outcome, total } once the run's outcome is known
  #started = null;
  #settle = null;
  #settled = false;
  #stopped = false;
  #t0 = 0;
  #inner = null; // the wasm poller while this tab leads
  #filler = null; // a wasm poller reading rows no other tab keeps (see #fill)
  #channel = null;
  #lockRequest = null; // aborts the wait for the lock
  #releaseLock = null;
  #told = ""; // the role and tab count onRoleChange last heard
  #querying = null;
  #requery = false;

  constructor(Inner, options, probe, offset) {
    this.#Inner = Inner;
    this.#options = options;
    this.#probe = probe;
    this.#key = channelName(options);
    this.#base = this.#delivered = offset;
    this.#endCursor = this.#cursor = probe.cursor;
  }

  get cursor() {
    return this.#cursor;
  }

  get #knownEnd() {
    return this.#base + this.#rows.length;
  }

  start() {
    if (this.#started) return this.#started;
    this.#started = new Promise((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    this.#t0 = Date.now();
    const { signal } = this.#options;
    if (this.#stopped || signal?.aborted) {
      this.#finish({ error: abortError(signal?.reason) });
      return this.#started;
    }
    signal?.addEventListener("abort", this.#onAbort);
    this.#channel = new BroadcastChannel(this.#key);
    this.#channel.onmessage = (event) => this.#onMessage(event.data);
    this.#elect();
    return this.#started;
  }

  stop() {
    this.#stopped = true;
    this.#leave();
    if (this.#started) this.#finish({ error: abortError() });
  }

  webhookReceived(payload) {
    if (typeof payload !== "object" || payload === null) {
      throw new TypeError(`Expected \`payload\` to be an object (got ${describe(payload)})`);
    }
    const { job_uid: jobUid, message, error } = payload;
    if (jobUid != null && jobUid !== this.#options.jobUid) {
      throw new TypeError("The webhook payload's `job_uid` is not this poller's `jobUid`");
    }
    if (this.#inner) return this.#inner.webhookReceived(payload);
    // Only what decides the end goes to the leader: a webhook body's other fields stay here.
    const relayed = { job_uid: this.#options.jobUid, message: String(message ?? ""), error: error === true };
    this.#post({ type: "webhook", payload: relayed });
  }

  _setBatchSink(sink) {
    this.#sink = sink;
  }

  free() {
    this.#probe.free();
  }

  // ---- election ------------------------------------------------------------------------------

  /** Leads at once when the lock is free; otherwise waits in line for it as a follower. */
  #elect() {
    const { locks } = navigator;
    this.#lockRequest = new AbortController();
    const { signal } = this.#lockRequest;
    locks
      .request(this.#key, { ifAvailable: true }, (lock) => {
        if (lock) return this.#lead();
        if (signal.aborted) return undefined;
        locks.request(this.#key, { signal }, () => this.#lead()).catch(noop);
        this.#setRole("follower");
        // A tab that joins late first gets the rows it missed from the leader (which counts
        // the tabs again on this message: this tab is now in line for the lock).
        this.#post({ type: "want", from: this.#id, next: this.#knownEnd });
        return undefined;
      })
      .catch(() => this.#alone(signal));
  }

  /** Locks refused (an opaque origin, a sandboxed frame): this tab polls for itself. */
  #alone(signal) {
    if (signal.aborted || this.#inner) return;
    this.role = "alone";
    this.#channel?.close();
    this.#channel = null;
    this.#poll();
  }

  /** Runs while this tab holds the lock; the returned promise keeps it until #leave(). */
  #lead() {
    if (!this.#channel) return undefined; // stopped or done while waiting: let the next tab lead
    this.#setRole("leader");
    this.#post({ type: "leader", from: this.#id });
    if (!this.#settled) this.#poll();
    return new Promise((resolve) => {
      this.#releaseLock = resolve;
    });
  }

  /** The wasm poller, from the last row this tab knows; its callbacks feed every tab. */
  #poll() {
    this.#stopFiller();
    const inner = this.#wasmPoller({
      onBatch: (batch) => this.#leaderBatch(batch),
      onStatus: (run) => {
        this.#post({ type: "status", run });
        this.#status(run);
      },
    });
    if (!inner) return;
    this.#inner = inner;
    inner.start().then(
      (summary) => this.#leaderEnded(inner, { summary }),
      (error) => this.#leaderEnded(inner, { error }),
    );
  }

  /** A wasm poller with this tab's options from the end of its rows; null (and the tab failed) if refused. */
  #wasmPoller(callbacks) {
    try {
      return new this.#Inner({
        ...this.#options,
        cursor: this.#endCursor,
        signal: undefined, // this tab's signal stops this tab: #onAbort
        onComplete: undefined,
        onError: undefined,
        onStatus: undefined,
        ...callbacks,
      });
    } catch (error) {
      this.#leave();
      this.#finish({ error });
      return null;
    }
  }

  /**
   * The leader keeps only the rows since it started: a tab resuming from an older cursor reads
   * the rows in between itself, and stops once they meet the shared ones.
   */
  #fill() {
    if (this.#filler || this.#inner) return;
    const filler = this.#wasmPoller({
      onBatch: ({ offset, results, cursor }) => {
        this.#receive(offset, results, cursor);
        if (this.#ahead.size === 0) this.#stopFiller();
        return this.#consumed(offset + results.length);
      },
    });
    if (!filler) return;
    this.#filler = filler;
    filler.start().then(
      () => this.#stopFiller(), // the run ended: every row is here; the leader's outcome decides
      (error) => {
        if (filler !== this.#filler) return;
        this.#stopFiller();
        this.#leave();
        this.#finish({ error });
      },
    );
  }

  #stopFiller() {
    const filler = this.#filler;
    this.#filler = null;
    filler?.stop();
  }

  #leaderBatch({ offset, results, cursor }) {
    this.#post({ type: "batch", offset, results, cursor });
    this.#receive(offset, results, cursor);
    return this.#consumed(offset + results.length);
  }

  #leaderEnded(inner, outcome) {
    if (inner !== this.#inner) return; // replaced or stopped by this tab: not the run's outcome
    this.#inner = null;
    const end = { outcome: toWire(outcome), total: this.#knownEnd };
    this.#post({ type: "end", ...end });
    this.#ended({ outcome, total: end.total });
  }

  /** Stops polling and listening; a held lock goes to the next tab in line. */
  #leave() {
    this.#stopFiller();
    const inner = this.#inner;
    this.#inner = null;
    inner?.stop();
    if (this.#channel) {
      this.#post({ type: "bye", from: this.#id });
      this.#channel.close();
      this.#channel = null;
    }
    this.#lockRequest?.abort();
    this.#releaseLock?.();
  }

  #onAbort = () => {
    this.#stopped = true;
    this.#leave();
    this.#finish({ error: abortError(this.#options.signal.reason) });
  };

  // ---- the channel ----------------------------------------------------------------------------

  #post(message) {
    this.#channel?.postMessage(message);
    this.#countTabs(); // at each poll: a tab closed since is no longer counted
  }

  #onMessage(message) {
    this.#countTabs();
    if (this.#settled && message.type !== "want") return; // an ended leader still serves late tabs
    switch (message.type) {
      case "want":
        return this.#answer(message);
      case "rows":
        return message.to === this.#id ? this.#caughtUp(message) : undefined;
      case "batch":
        return this.#receive(message.offset, message.results, message.cursor);
      case "status":
        return this.#status(message.run);
      case "end":
        return this.#ended({ outcome: fromWire(message.outcome), total: message.total });
      case "leader":
        // A new leader may hold rows the last one never answered with.
        this.#asked = null;
        return this.#ahead.size > 0 ? this.#askForMissing() : undefined;
      case "webhook":
        return this.#inner?.webhookReceived(message.payload);
      default:
        return undefined;
    }
  }

  /** The leader sends a tab the rows it asked for (those it has), the status and the outcome. */
  #answer({ from, next }) {
    if (this.role !== "leader") return;
    const offset = Math.min(Math.max(next, this.#base), this.#knownEnd);
    const results = this.#rows.slice(offset - this.#base);
    const end = this.#end && { outcome: toWire(this.#end.outcome), total: this.#end.total };
    this.#post({ type: "rows", to: from, offset, results, cursor: this.#endCursor, run: this.#lastRun, end });
  }

  #caughtUp({ offset, results, cursor, run, end }) {
    if (offset > this.#knownEnd) this.#fill(); // nobody keeps the rows in between
    this.#receive(offset, results, cursor);
    if (run) this.#status(run);
    if (end) this.#ended({ outcome: fromWire(end.outcome), total: end.total });
  }

  #askForMissing() {
    if (this.#asked === this.#knownEnd) return;
    this.#asked = this.#knownEnd;
    this.#post({ type: "want", from: this.#id, next: this.#knownEnd });
  }

  // ---- rows, in order, once --------------------------------------------------------------------

  /** Adds rows to the log: overlaps are cut off, batches after a gap wait for it to fill. */
  #receive(offset, results, cursor) {
    const known = this.#knownEnd;
    if (offset > known) {
      this.#ahead.set(offset, { offset, results, cursor });
      this.#askForMissing();
      return;
    }
    if (offset + results.length < known) return;
    for (let i = known - offset; i < results.length; i += 1) this.#rows.push(results[i]);
    this.#endCursor = cursor;
    for (const [at, batch] of this.#ahead) {
      if (at > this.#knownEnd) continue;
      this.#ahead.delete(at);
      this.#receive(batch.offset, batch.results, batch.cursor);
    }
    this.#pump();
  }

  /** Hands the known rows to onBatch, then the iterator, waiting for each (backpressure). */
  async #pump() {
    if (this.#pumping) return;
    this.#pumping = true;
    while (!this.#settled && this.#delivered < this.#knownEnd) {
      const end = this.#knownEnd;
      const results = this.#rows.slice(this.#delivered - this.#base, end - this.#base);
      const batch = Object.freeze({ results, offset: this.#delivered, cursor: this.#endCursor });
      this.#cursor = batch.cursor;
      await this.#call("onBatch", this.#options.onBatch, batch);
      await this.#call("iterator", this.#sink, batch);
      this.#delivered = end;
      this.#wake();
    }
    this.#pumping = false;
    this.#settleIfDone();
  }

  /** Resolves once this tab's consumer has taken the rows before `end`. */
  #consumed(end) {
    if (this.#delivered >= end || this.#settled) return undefined;
    return new Promise((resolve) => this.#waiters.push({ end, resolve }));
  }

  #wake() {
    this.#waiters = this.#waiters.filter(({ end, resolve }) => {
      if (!this.#settled && end > this.#delivered) return true;
      resolve();
      return false;
    });
  }

  #status(run) {
    // A new leader reads the status again: the same status is not news to this tab.
    const json = JSON.stringify(run);
    if (json === this.#lastRunJson) return;
    this.#lastRunJson = json;
    this.#lastRun = run;
    this.#fire("onStatus", Object.freeze({ ...run }));
  }

  // ---- the outcome -----------------------------------------------------------------------------

  #ended(end) {
    // Another tab's outcome (a leader that stopped right after it): the run is over here too.
    const inner = this.#inner;
    this.#inner = null;
    inner?.stop();
    this.#end ??= end;
    this.#settleIfDone();
  }

  /** The outcome is given once this tab has delivered every row before it. */
  #settleIfDone() {
    if (!this.#end || this.#settled || this.#pumping) return;
    if (this.#delivered < this.#end.total) {
      if (this.#knownEnd < this.#end.total) this.#askForMissing();
      return;
    }
    this.#finish(this.#end.outcome);
  }

  #finish({ summary, error }) {
    if (this.#settled) return;
    this.#settled = true;
    this.#options.signal?.removeEventListener("abort", this.#onAbort);
    this.#wake();
    // A follower is done with the channel; the leader keeps it and the lock (until stop() or
    // the tab closes) so that a tab joining now gets the rows and the outcome, not a new poll.
    if (this.role !== "leader") this.#leave();
    if (summary) {
      const done = Object.freeze({ ...summary, durationMs: Date.now() - this.#t0, cursor: this.#cursor });
      this.#fire("onComplete", done);
      this.#settle.resolve(done);
    } else {
      this.#fire("onError", error);
      this.#settle.reject(error);
    }
  }

  // ---- callbacks -------------------------------------------------------------------------------

  /** Calls a batch receiver and waits for its promise; a failure is reported, never fatal. */
  async #call(name, callback, arg) {
    if (!callback) return;
    try {
      await callback(arg);
    } catch (error) {
      this.#report(error, name);
    }
  }

  /** onStatus, onComplete, onError, onRoleChange: not waited for. */
  #fire(name, arg) {
    const callback = this.#options[name];
    if (!callback) return;
    try {
      const result = callback(arg);
      if (typeof result?.then === "function") result.then(undefined, (error) => this.#report(error, name));
    } catch (error) {
      this.#report(error, name);
    }
  }

  #report(error, name) {
    const { onCallbackError } = this.#options;
    if (!onCallbackError) return console.error(`captaindata-poller: ${name} failed`, error);
    try {
      onCallbackError(error, name);
    } catch (again) {
      console.error(`captaindata-poller: onCallbackError failed`, again);
    }
    return undefined;
  }

  // ---- role and tab count ----------------------------------------------------------------------

  #setRole(role) {
    this.role = role;
    this.#countTabs();
  }

  /** Tabs sharing = holders and waiters of the lock; counted again on every channel message. */
  #countTabs() {
    if (this.#querying) {
      this.#requery = true;
      return;
    }
    this.#querying = navigator.locks
      .query()
      .then(({ held = [], pending = [] }) => {
        const tabs = [...held, ...pending].filter((lock) => lock.name === this.#key).length;
        this.#tell(tabs);
      }, noop)
      .finally(() => {
        this.#querying = null;
        if (this.#requery) {
          this.#requery = false;
          this.#countTabs();
        }
      });
  }

  #tell(tabs) {
    const now = `${this.role} ${tabs}`;
    if (this.#settled || this.#stopped || now === this.#told) return;
    this.#told = now;
    this.#fire("onRoleChange", Object.freeze({ role: this.role, tabs }));
  }
}
