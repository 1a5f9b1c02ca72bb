// Tabs of one origin polling the same run share one poller (browsers only): the browser side
// of the protocol in js/tab-protocol.js, loaded once a second tab shares the run (js/tabs.js
// holds the run alone until then). A Web Lock elects the leader, a BroadcastChannel carries
// the messages, the page reports its visibility; this file performs the protocol's effects
// and decides nothing. Rows, statuses and the outcome reach this tab's callbacks through
// `delivery` (js/delivery.js), as they do for a poller running alone.

import { abortedError } from "./errors.js";
import { watchPage } from "./page.js";
import { summary } from "./summary.js";
import { callbackFailed } from "./tab-errors.js";
import { TabProtocol } from "./tab-protocol.js";

const MAX_TIMER_MS = 2 ** 31 - 1;
const noop = () => {};

/** Channel messages this page did not read, by reason (see js/tab-messages.js). */
const ignored = { malformed: 0, notFromLeader: 0 };

/**
 * For diagnostics and tests: how many messages the shared pollers of this page ignored,
 * `{ malformed, notFromLeader }` (malformed or of no known type; rows, a status or an outcome
 * from a tab that never said it leads, or a relayed webhook this run's poller refused).
 */
export function ignoredMessages() {
  return { ...ignored };
}

/**
 * This tab's part in the poller the tabs of a run share. `from` is what js/tabs.js hands over:
 * `name` (the run's lock and channel), and when this tab polled the run alone until now,
 * `lock` (lets go of the lock it holds), `channel` (open), `messages` (received while it
 * handed over), `kept` (its last delivered rows, for a tab that joins), `requests`, `retries`
 * and `startedAt` (its budgets and figures so far); `options.cursor` is where it stopped.
 */
export class SharedPoller {
  #from;
  #options;
  #Wasm;
  #delivery;
  // A wasm poller this tab never starts: it checked the options and checks each webhook
  // relayed; its cursor and offset are where this tab starts.
  #unstarted;
  #tab = null; // the protocol
  #events = []; // events are handled one at a time, even when a callback calls back in
  #busy = false;
  #poller = null; // this tab's wasm poller, when the protocol runs one
  #waiting = []; // the poller's batches waiting for this tab's consumer (backpressure)
  #settle = null;
  #started = null;
  #stopped = false;
  #channel = null;
  #lock = noop; // asks for the lock: leads at once when it is free, else waits in line
  #release = noop; // lets go of the lock, the lock request, listeners and timers

  constructor(options, Wasm, delivery, from) {
    this.#from = from;
    this.#options = options;
    this.#Wasm = Wasm;
    this.#delivery = delivery;
    this.#unstarted = new Wasm(options, delivery);
  }

  get role() {
    return this.#tab?.role ?? "follower";
  }

  get cursor() {
    return this.#tab?.cursor ?? this.#unstarted.cursor;
  }

  start() {
    this.#started ??= new Promise((resolve, reject) => {
      this.#settle = { resolve, reject };
      this.#join().catch(reject);
    });
    return this.#started;
  }

  stop() {
    this.#stopped = true;
    this.#send({ type: "stop" });
  }

  webhookReceived(payload) {
    this.#unstarted.webhookReceived(payload); // the crate's checks: an object, this run's job_uid
    this.#send({ type: "webhook", payload });
  }

  free() {
    this.stop();
    this.#unstarted.free();
  }

  async #join() {
    const { signal, maxRequests, maxDurationMs } = this.#options;
    const { name, kept, requests = 0, retries = 0, startedAt = Date.now() } = this.#from;
    const [offset, cursor] = [this.#unstarted._offset, this.#unstarted.cursor];
    if (signal?.aborted || this.#stopped) {
      this.#from.lock?.(); // what this tab held alone
      this.#from.channel?.close();
      if (signal?.aborted) throw abortedError(signal.reason);
      const durationMs = Date.now() - startedAt;
      return this.#settle.resolve(summary({ totalResults: offset, requests, retries, durationMs, cursor }));
    }
    const id = crypto.randomUUID();
    this.#tab = new TabProtocol({ id, offset, cursor, kept, requests, retries, startedAt, maxRequests, maxDurationMs });
    this.#channel = this.#from.channel ?? new BroadcastChannel(name);
    this.#channel.onmessage = ({ data }) => this.#send({ type: "message", data });
    const unlock = this.#lockOn(name, this.#from.lock);
    const unlisten = this.#listen(startedAt);
    this.#release = () => {
      this.#channel.close();
      unlock();
      unlisten();
    };
    const early = this.#events.splice(0); // webhooks received before start()
    this.#send({ type: "start", hidden: Boolean(globalThis.document?.hidden) });
    for (const data of this.#from.messages ?? []) this.#send({ type: "message", data });
    for (const event of early) this.#send(event);
    return undefined;
  }

  /**
   * Makes `#lock` ask for the Web Lock `name`: `lock` when it is free (or when locks are
   * refused, in a sandboxed frame: this tab then leads alone), else `queued` and a place in
   * line; `held` lets go of the lock this tab holds already (it is granted at the first ask).
   * Returns what gives up the lock and the place in line.
   */
  #lockOn(name, held) {
    const { locks } = navigator;
    const inLine = new AbortController();
    let unlock = noop;
    let handed = held;
    const hold = () => {
      const held = new Promise((resolve) => (unlock = resolve)); // before the protocol may let go
      this.#send({ type: "lock" });
      return held;
    };
    const ask = (lock) => {
      if (lock) return hold();
      if (inLine.signal.aborted) return undefined;
      this.#send({ type: "queued" });
      locks.request(name, { signal: inLine.signal }, hold).catch(noop);
      return undefined;
    };
    this.#lock = () => {
      if (!handed) return locks.request(name, { ifAvailable: true }, ask).catch(() => this.#send({ type: "lock" }));
      [unlock, handed] = [handed, null];
      return this.#send({ type: "lock" });
    };
    return () => {
      inLine.abort();
      unlock();
    };
  }

  /**
   * The page's visibility and unload (a Web Worker has neither: it counts as visible), the
   * signal, this tab's maxDurationMs; returns what removes the listeners and the timer.
   */
  #listen(startedAt) {
    const { signal, maxDurationMs } = this.#options;
    const page = globalThis.document ?? new EventTarget();
    const visibility = () => this.#send({ type: "visibility", hidden: page.hidden });
    const unload = () => this.#send({ type: "unload" });
    const abort = () => this.#send({ type: "abort", error: abortedError(signal.reason) });
    const timeout = () => this.#send({ type: "timeout" });
    page.addEventListener("visibilitychange", visibility);
    addEventListener("pagehide", unload);
    signal?.addEventListener("abort", abort);
    const left = maxDurationMs - (Date.now() - startedAt);
    const timer = maxDurationMs === undefined ? null : setTimeout(timeout, Math.max(0, Math.min(left, MAX_TIMER_MS)));
    return () => {
      page.removeEventListener("visibilitychange", visibility);
      removeEventListener("pagehide", unload);
      signal?.removeEventListener("abort", abort);
      clearTimeout(timer);
    };
  }

  /** Hands an event to the protocol and performs what it says, in order. */
  #send(event) {
    if (!this.#tab && event.type !== "webhook") return;
    this.#events.push(event);
    if (!this.#tab) return;
    if (this.#busy) return;
    this.#busy = true;
    try {
      while (this.#events.length > 0) {
        for (const effect of this.#tab.handle(this.#events.shift(), Date.now())) this.#perform(effect);
      }
    } finally {
      this.#busy = false;
    }
    this.#wake();
  }

  #perform(effect) {
    switch (effect.type) {
      case "post":
        return this.#channel.postMessage(effect.message);
      case "lock":
        return this.#lock();
      case "poll":
        return this.#poll(effect);
      case "stopPoll":
        this.#poller?.stop();
        return this.#wake(true);
      case "pace":
        return this.#poller?._hidden(effect.hidden);
      case "webhook":
        return this.#relay(effect.payload);
      case "ignored":
        ignored[effect.why] += 1;
        return undefined;
      case "deliver":
        return this.#deliver(effect.batch);
      case "status":
        return this.#delivery.status(Object.freeze({ ...effect.run }));
      case "role":
        return this.#delivery.role(effect.role, effect.tabs);
      case "release":
        return this.#release();
      case "end":
        return this.#end(effect.outcome);
      default:
        return undefined;
    }
  }

  /** A webhook another tab relayed, to this tab's poller: the crate's checks may refuse it. */
  #relay(payload) {
    try {
      this.#poller?.webhookReceived(payload);
    } catch {
      ignored.malformed += 1; // not this run's (job_uid): nothing to read
    }
  }

  /** This tab's wasm poller, from the protocol's cursor with what is left of its budgets. */
  #poll({ cursor, maxRequests, maxDurationMs }) {
    const options = { ...this.#options, cursor, maxRequests, maxDurationMs, signal: undefined };
    const receiver = {
      batch: (batch) => this.#polled(poller, batch),
      status: (run) => poller === this.#poller && this.#send({ type: "polledStatus", run }),
    };
    let poller;
    try {
      poller = new this.#Wasm(options, receiver);
    } catch (error) {
      return this.#events.push({ type: "pollEnded", error }); // a budget the wasm refuses: this tab's end
    }
    this.#poller = poller;
    const unwatch = watchPage(poller, { visibility: false }); // online/offline; the protocol paces
    const ended = (outcome) => {
      unwatch();
      if (this.#poller === poller) this.#poller = null;
      poller.free();
      this.#send({ type: "pollEnded", ...outcome });
    };
    // Started once the protocol's effects are done (its pace comes right after this one).
    queueMicrotask(() => poller.start().then((summary) => ended({ summary }), (error) => ended({ error })));
  }

  /** A batch of this tab's poller: the poller goes on once this tab has delivered it. */
  #polled(poller, batch) {
    if (poller !== this.#poller) return undefined;
    this.#send({ type: "polled", batch });
    const end = batch.offset + batch.results.length;
    if (this.#tab.delivered >= end || this.#tab.ended) return undefined;
    return new Promise((resolve) => this.#waiting.push({ end, resolve }));
  }

  #wake(all = false) {
    const { delivered, ended } = this.#tab;
    this.#waiting = this.#waiting.filter(({ end, resolve }) => {
      if (!all && !ended && end > delivered) return true;
      resolve();
      return false;
    });
  }

  /**
   * Through the same delivery as a lone poller: onBatch, then the iterator (backpressure). As
   * there, a batch taken at once counts as delivered before what its callback did (a stop()
   * in onBatch keeps it); a stop() while its promise is pending waits for it: it counts if the
   * promise fulfils and stays before the cursor if it rejects.
   */
  #deliver({ offset, results, cursor }) {
    const end = offset + results.length;
    const done = { type: "delivered", offset: end, cursor };
    const failed = (cause) => ({ type: "deliveryFailed", error: callbackFailed(offset, end, cause) });
    let taken;
    try {
      taken = this.#delivery.batch(Object.freeze({ results, offset, cursor }));
    } catch (cause) {
      return this.#events.unshift(failed(cause));
    }
    if (!taken) return this.#events.unshift(done); // handled next, before what the callback sent
    return taken.then(() => this.#send(done), (cause) => this.#send(failed(cause)));
  }

  #end({ summary, stopped, error }) {
    if (error) this.#settle.reject(error);
    else this.#settle.resolve(Object.freeze(summary ?? stopped));
  }
}
