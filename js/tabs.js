// Tabs of one origin polling the same run share one poller (browsers only). A tab that is the
// only one polling its run needs none of the protocol: it holds the run's Web Lock, polls with
// its own wasm poller and listens on the run's channel. The protocol and its glue
// (js/tabs-shared.js around js/tab-protocol.js) are loaded once another tab shares the run: at
// once when the lock is held already, or when the other tab's first message arrives; this tab
// then hands over what it has (the lock, the channel, its cursor, its last rows, its budgets
// so far) and goes on as the leader. A page polling one run alone never downloads them.

import { CaptainDataError } from "./errors.js";
import { watchPage } from "./page.js";
import { LOG_ROWS } from "./tab-limits.js";
import { checkTabOptions } from "./tab-options.js";

/**
 * The sharing hook of the public JobPoller (js/poller.js): a shared poller for `options`, or
 * null (no Web Locks, BroadcastChannel or SubtleCrypto, or `shareAcrossTabs: false`).
 */
export function shareAcrossTabs(options, { WasmJobPoller, delivery }) {
  return sharingRole(options) === "alone" ? null : new LoneTab(options, WasmJobPoller, delivery);
}

/** Checks this layer's options; the role of a poller until it joins the others. */
export function sharingRole(options) {
  checkTabOptions(options);
  const able = typeof BroadcastChannel === "function" && globalThis.navigator?.locks && globalThis.crypto?.subtle;
  return options.shareAcrossTabs !== false && able ? "follower" : "alone";
}

/**
 * Tabs share when their requests would be the same: one run of one API, with the same
 * credentials, headers and `rowKey`, and when they were given the same `shareKey`. The
 * credentials and the key enter the name only as a digest.
 */
async function shareName({ baseUrl = "", jobUid, apiKey, projectId, headers, rowKey, shareKey }) {
  let base = baseUrl;
  try {
    base = new URL(baseUrl).href.replace(/\/+$/, "");
  } catch {
    // the default URL, or a value the wasm poller refused already
  }
  const sent = JSON.stringify([apiKey, projectId, [...new Headers(headers)].sort(), rowKey, shareKey]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(sent));
  const tag = btoa(String.fromCharCode(...new Uint8Array(digest, 0, 9))); // 72 bits, 12 characters
  return `captaindata-poller/3 ${base} ${jobUid} ${tag}`;
}

/** The lock `name` if it is free: `{ release }`, else null (another tab holds it). */
function holdLock(name) {
  return new Promise((resolve) => {
    const ask = (lock) => {
      if (!lock) return resolve(null);
      return new Promise((release) => resolve({ release })); // held until release()
    };
    // Locks refused (a sandboxed frame): this tab leads alone, as the protocol's glue does.
    navigator.locks.request(name, { ifAvailable: true }, ask).catch(() => resolve({ release: () => {} }));
  });
}

/** This tab's poller of a run it may share, polling alone while no other tab does (see the file's head). */
class LoneTab {
  #options;
  #Wasm;
  #delivery;
  #poller; // this tab's wasm poller while alone; it validated the options
  #shared = null; // the protocol's poller, once another tab shares the run
  #role = "follower";
  #started = null;
  #stopped = false;
  #messages = null; // handing over: what the channel brought meanwhile
  #webhooks = []; // handing over: for the protocol's poller
  #kept = []; // the last rows delivered while alone (at most LOG_ROWS), ending at #keptEnd
  #keptEnd = 0;

  constructor(options, Wasm, delivery) {
    this.#options = options;
    this.#Wasm = Wasm;
    this.#delivery = delivery;
    const receiver = {
      batch: (batch) => {
        this.#keep(batch);
        return delivery.batch(batch);
      },
      status: (run) => delivery.status(run),
    };
    this.#poller = new Wasm(options, receiver);
  }

  get role() {
    return this.#shared?.role ?? this.#role;
  }

  get cursor() {
    return this.#shared?.cursor ?? this.#poller.cursor;
  }

  start() {
    this.#started ??= this.#run();
    return this.#started;
  }

  stop() {
    this.#stopped = true;
    if (this.#shared) this.#shared.stop();
    else this.#poller.stop();
  }

  webhookReceived(payload) {
    if (this.#shared) return this.#shared.webhookReceived(payload);
    this.#poller.webhookReceived(payload); // the crate's checks, and a hint while alone
    if (this.#messages) this.#webhooks.push(payload);
    return undefined;
  }

  free() {
    this.stop();
    this.#shared?.free();
    this.#poller?.free();
    this.#poller = null;
  }

  async #run() {
    const name = await shareName(this.#options);
    // Stopped or aborted already: the wasm poller says "stopped" or ABORTED itself.
    if (this.#stopped || this.#options.signal?.aborted) return this.#poller.start();
    const lock = await holdLock(name);
    if (!lock) return this.#share({ name }); // another tab leads: follow it
    if (this.#stopped) {
      lock.release();
      return this.#poller.start();
    }
    const startedAt = Date.now();
    const channel = new BroadcastChannel(name);
    channel.onmessage = ({ data }) => this.#handOver(data);
    this.#role = "leader";
    this.#delivery.role("leader", 1);
    const unwatch = watchPage(this.#poller);
    let outcome;
    try {
      outcome = { summary: await this.#poller.start() };
    } catch (error) {
      outcome = { error };
    } finally {
      unwatch();
    }
    const { summary, error } = outcome;
    if (this.#messages && !this.#stopped && summary?.status === "stopped") {
      const { requests, retries } = summary;
      const kept = this.#keptBefore(this.#poller._offset);
      return this.#share({ name, lock: lock.release, channel, messages: this.#messages, kept, requests, retries, startedAt });
    }
    channel.close();
    lock.release();
    if (error) throw error;
    return summary;
  }

  /** Another tab spoke on the run's channel: this tab stops polling alone to share the run. */
  #handOver(data) {
    if (this.#messages) return void this.#messages.push(data);
    this.#messages = [data];
    this.#poller.stop(); // a batch in hand is finished first; start() then says "stopped"
  }

  /** The protocol's poller, from where this tab's own poller stopped, takes over. */
  async #share(from) {
    let SharedPoller;
    try {
      ({ SharedPoller } = await import("./tabs-shared.js"));
    } catch (cause) {
      from.channel?.close();
      from.lock?.();
      throw new CaptainDataError("LOAD_FAILED", `could not load the tab-sharing module: ${cause?.message ?? cause}`, { cause });
    }
    const options = { ...this.#options, cursor: this.#poller.cursor };
    this.#shared = new SharedPoller(options, this.#Wasm, this.#delivery, from);
    this.#poller.free();
    this.#poller = null;
    for (const payload of this.#webhooks.splice(0)) this.#shared.webhookReceived(payload);
    if (this.#stopped) this.#shared.stop();
    return this.#shared.start();
  }

  #keep({ offset, results }) {
    if (offset !== this.#keptEnd) this.#kept = [];
    this.#kept.push(...results);
    this.#keptEnd = offset + results.length;
    if (this.#kept.length > LOG_ROWS) this.#kept.splice(0, this.#kept.length - LOG_ROWS);
  }

  /** The kept rows before `offset` (a batch refused or not finished is not delivered). */
  #keptBefore(offset) {
    const extra = this.#keptEnd - offset;
    return extra < 0 ? [] : this.#kept.slice(0, Math.max(0, this.#kept.length - extra));
  }
}
