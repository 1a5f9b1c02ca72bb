// The framework-free core of the React, Vue and Svelte bindings (TanStack Query's shape: one
// core, thin adapters). It owns one public JobPoller per key and turns its callbacks into
// snapshots; the adapters only hand those snapshots to their framework.
//
// - Key: the options' values, not their identity (callbacks, `fetch`, `cursor` excluded), so a new
//   options object or inline callbacks with the same values never restart the poller. The
//   latest callbacks are read through each subscriber's ref when they are called.
// - Snapshot: one frozen object, replaced only on change (`getSnapshot` must return the same
//   object until then, or React renders forever).
// - Acquire/release: the poller starts and stops in a microtask after the last change, so
//   React StrictMode's setup → cleanup → setup and a Svelte SSR subscribe → unsubscribe make
//   one poller, or none; no macrotask (timer, response) runs in between, so no request is sent
//   after the release.
// - Rows: appended in place to one array (no copy of earlier rows); `rowCount` changes with
//   each batch; `keepRows` bounds what is kept; `rowsBefore` = `rowCount - rows.length` (rows
//   before a resume cursor, or let go by keepRows), so the two never disagree silently.
// - Failures: a bad option's TypeError is kept (not replaced) and given `code: "INVALID_OPTION"`,
//   so every failed state has `error.code`.
import { CaptainDataError, asCaptainDataError } from "./errors.js";

/** The JobPoller class of this runtime, loaded on first use (never on a server render). */
const loadJobPoller = () => import("#captaindata-poller").then((entry) => entry.JobPoller);

const noop = () => {};
const base = { rows: Object.freeze([]), rowCount: 0, rowsBefore: 0, run: null, retrying: null, error: null, summary: null, role: null, cursor: null, stop: noop, resume: noop };

/** The snapshot without options (and on a server render). */
export const IDLE = Object.freeze({ ...base, status: "idle" });
/** The snapshot of a key nobody has subscribed to yet. */
const PENDING = Object.freeze({ ...base, status: "loading" });

const CALLBACKS = ["onBatch", "onStatus", "onComplete", "onError", "onRoleChange", "onCallbackError"];
const BINDING_OPTIONS = ["keepRows"];

const entries = new Map(); // key → PollerEntry

/**
 * The key of `options`: equal for equal values; null when there is nothing to poll. `cursor` is
 * left out: it is where a poller starts, read once (an app that saves each batch's cursor and
 * passes it back must not restart the poller on every batch).
 */
export function pollerKey(options) {
  if (options == null || !options.jobUid) return null;
  const { cursor, ...values } = options;
  return stableJson(values);
}

/** The current snapshot for `key` (cached: the same object until something changes). */
export function getSnapshot(key) {
  if (key === null) return IDLE;
  return entries.get(key)?.snapshot ?? PENDING;
}

/**
 * The snapshot a new subscriber is shown first: idle while the poller of `key` has not started
 * (it starts a microtask after the subscribe), so a server render, which subscribes and
 * unsubscribes in one turn, renders idle as React's server snapshot does; else the current one.
 */
export function firstSnapshot(key) {
  const entry = key === null ? undefined : entries.get(key);
  return entry?.started ? entry.snapshot : IDLE;
}

/**
 * Subscribes to the poller of `key`; `ref.current` holds the subscriber's latest options (its
 * callbacks are read from there when called). Returns the unsubscribe function.
 */
export function subscribe(key, ref, listener) {
  if (key === null) return noop;
  let entry = entries.get(key);
  if (!entry) {
    entry = new PollerEntry(key, ref.current);
    entries.set(key, entry);
  }
  const observer = { ref, listener };
  entry.acquire(observer);
  let subscribed = true;
  return () => {
    if (subscribed) entry.release(observer);
    subscribed = false;
  };
}

class PollerEntry {
  #key;
  #options;
  #observers = new Set();
  #rows = [];
  #poller = null;
  #phase = "new"; // new → running → ended; or → ended straight from new (released, stopped)
  #stopped = false;
  #queued = false;
  #runs = 0; // a resume() while the module still loads must not make a second poller

  /** Whether this poller has started (or ended): a new subscriber then sees its snapshot, not idle. */
  get started() {
    return this.#phase !== "new";
  }

  constructor(key, options) {
    this.#key = key;
    this.#options = options;
    this.snapshot = Object.freeze({ ...PENDING, rows: this.#rows, stop: () => this.stop(), resume: () => this.resume() });
  }

  acquire(observer) {
    this.#observers.add(observer);
    this.#reconcile();
  }

  release(observer) {
    this.#observers.delete(observer);
    this.#reconcile();
  }

  /** Stops polling; the snapshot says `"stopped"` with the last cursor. */
  stop() {
    if (this.#stopped || this.#phase === "ended") return;
    this.#stopped = true;
    if (this.#poller) this.#poller.stop();
    else this.#end({ status: "stopped", cursor: this.snapshot.cursor ?? this.#options.cursor ?? null });
  }

  /**
   * After a failure or a stop, polls again from the snapshot's cursor with a new poller: the
   * rows stay, and the next ones follow them (the recovery of CALLBACK_FAILED, a timeout, …).
   */
  resume() {
    if (this.#phase !== "ended" || !["failed", "stopped"].includes(this.snapshot.status)) return;
    if (this.snapshot.cursor !== null) this.#options = { ...this.#options, cursor: this.snapshot.cursor };
    this.#phase = "new";
    this.#stopped = false;
    this.#poller = null;
    this.#publish({ status: "loading", error: null, retrying: null });
    this.#reconcile();
  }

  /** Starts or stops once the subscribers of this tick are known. */
  #reconcile() {
    if (this.#queued) return;
    this.#queued = true;
    queueMicrotask(() => {
      this.#queued = false;
      if (this.#observers.size === 0) {
        if (entries.get(this.#key) === this) entries.delete(this.#key);
        this.stop();
      } else if (this.#phase === "new" && !this.#stopped) {
        this.#phase = "running";
        this.#notify(); // `started`: a Svelte subscriber shown idle now gets the loading snapshot
        this.#run();
      }
    });
  }

  async #run() {
    const run = ++this.#runs;
    let JobPoller;
    try {
      JobPoller = await loadJobPoller();
    } catch (cause) {
      if (run !== this.#runs || this.#stopped) return;
      const error = new CaptainDataError("LOAD_FAILED", `could not load captaindata-poller: ${cause?.message ?? cause}`, { cause });
      this.#fail(error);
      return this.#fanOut("onError", error);
    }
    if (run !== this.#runs || this.#stopped) return; // stopped (and perhaps resumed) meanwhile
    let started;
    try {
      checkKeepRows(this.#options.keepRows);
      this.#poller = new JobPoller(this.#pollerOptions());
      started = this.#poller.start();
    } catch (error) {
      return this.#fail(invalidOption(error)); // a TypeError naming the option
    }
    this.#publish({ role: this.#poller.role });
    try {
      const summary = await started;
      const cursor = summary.cursor ?? null;
      // totalResults counts the rows before a resume cursor too: a resumed poller that got no
      // new row still says how many the run has.
      const rowCount = Math.max(this.snapshot.rowCount, summary.totalResults);
      const counts = { rowCount, rowsBefore: rowCount - this.#rows.length };
      // "incomplete" (rows known missing) is an outcome of its own, with its summary.
      const ended = summary.status === "stopped" ? { status: "stopped" } : { status: summary.status === "incomplete" ? "incomplete" : "finished", summary };
      this.#end({ ...ended, cursor, ...counts });
    } catch (error) {
      this.#fail(invalidOption(asCaptainDataError(error))); // start() rejects with a bad option's TypeError in a browser
    }
  }

  /** The poller's options: the values as given, callbacks that update the snapshot first. */
  #pollerOptions() {
    const options = { ...this.#options };
    for (const name of [...CALLBACKS, ...BINDING_OPTIONS]) delete options[name];
    if (typeof this.#options.fetch === "function") options.fetch = (input, init) => this.#latest("fetch")(input, init);
    options.onBatch = (batch) => this.#batch(batch);
    options.onStatus = (run) => {
      // `retrying` is read defensively: a glue without it leaves the state's null.
      this.#publish({ run, retrying: run?.retrying ?? null, status: this.#live() });
      return this.#fanOut("onStatus", run);
    };
    options.onRoleChange = (sharing) => {
      this.#publish({ role: sharing.role });
      return this.#fanOut("onRoleChange", sharing);
    };
    options.onComplete = (summary) => this.#fanOut("onComplete", summary);
    options.onError = (error) => {
      if (!this.#stopped) return this.#fanOut("onError", error);
    };
    if (typeof this.#options.onCallbackError === "function") {
      options.onCallbackError = (error, name) => this.#latest("onCallbackError")(error, name);
    }
    return options;
  }

  /** Hands the batch to every subscriber's onBatch; the rows join the snapshot once they took it. */
  #batch(batch) {
    const taken = this.#fanOut("onBatch", batch);
    const append = () => {
      const keep = this.#options.keepRows ?? Infinity;
      const rows = this.#rows;
      for (const row of batch.results) rows.push(row); // no spread: a huge batch would overflow the stack
      if (rows.length > keep) rows.splice(0, rows.length - keep);
      const rowCount = batch.offset + batch.results.length;
      this.#publish({ status: this.#live(), rowCount, rowsBefore: rowCount - rows.length, cursor: batch.cursor, role: this.#poller?.role ?? null });
    };
    if (taken && typeof taken.then === "function") return taken.then(append);
    append();
  }

  /** Calls `name` of every subscriber; a promise when one returned a promise. */
  #fanOut(name, value) {
    const results = [];
    for (const { ref } of this.#observers) {
      const callback = ref.current?.[name];
      if (typeof callback === "function") results.push(callback(value));
    }
    if (results.some((r) => r && typeof r.then === "function")) return Promise.all(results).then(noop);
  }

  /** `name` from the latest options of a current subscriber (the first one's at creation). */
  #latest(name) {
    for (const { ref } of this.#observers) if (typeof ref.current?.[name] === "function") return ref.current[name];
    return this.#options[name];
  }

  /** "polling" while it runs; an end already shown (a stop during a slow onBatch) stays. */
  #live() {
    return this.#phase === "ended" ? this.snapshot.status : "polling";
  }

  #fail(error) {
    this.#end({ status: "failed", error, cursor: this.#poller?.cursor ?? null });
  }

  #end(changes) {
    if (this.#phase === "ended") return;
    this.#phase = "ended";
    this.#publish({ retrying: null, ...changes }); // nothing is retried once it ended
  }

  #publish(changes) {
    const next = { ...this.snapshot, ...changes };
    if (Object.keys(changes).every((k) => next[k] === this.snapshot[k])) return; // a new object only on change
    this.snapshot = Object.freeze(next);
    this.#notify();
  }

  #notify() {
    for (const { listener } of [...this.#observers]) listener();
  }
}

/** A bad option's TypeError with `code: "INVALID_OPTION"` (the same object, its message naming the option). */
function invalidOption(error) {
  if (error instanceof TypeError && !(error instanceof CaptainDataError) && error.code === undefined) {
    Object.defineProperty(error, "code", { value: "INVALID_OPTION", enumerable: true });
  }
  return error;
}

function checkKeepRows(keepRows) {
  if (keepRows === undefined || keepRows === Infinity || (Number.isSafeInteger(keepRows) && keepRows >= 0)) return;
  throw new TypeError(`Expected \`keepRows\` to be a non-negative integer or Infinity (got ${JSON.stringify(keepRows) ?? String(keepRows)})`);
}

/**
 * JSON of `value` with sorted keys; callbacks left out, other functions as a marker (they never
 * restart), `Headers` as their entries, other objects (an AbortSignal) by identity. It never
 * touches the `Headers` global: Node's getter would load its HTTP stack during a server render.
 */
function stableJson(value) {
  return JSON.stringify(value, function replacer(name, v) {
    if (typeof v === "function") return CALLBACKS.includes(name) ? undefined : "[function]";
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype || proto === null) {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]));
    }
    if (typeof v.entries === "function") return [...v.entries()];
    return `[object ${identity(v)}]`;
  });
}

// An object option (an AbortSignal) is keyed by identity: a new one is a new poller.
const ids = new WeakMap();
let lastId = 0;
function identity(object) {
  if (!ids.has(object)) ids.set(object, ++lastId);
  return ids.get(object);
}
