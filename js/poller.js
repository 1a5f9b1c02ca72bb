// The public API every entry exports (browser, Node, workerd): `JobPoller`, `preload`,
// `pollStep` and `scheduleWorkflow`, around the wasm module. An entry says how its runtime
// instantiates the module; this file decides when (on first use, never at import) and what a
// user sees: a quiet stop(), LOAD_FAILED, errors that are `CaptainDataError` instances.

import { Delivery } from "./delivery.js";
import { CaptainDataError, abortedError, asCaptainDataError } from "./errors.js";
import { WEBHOOK_OF_ANOTHER_RUN_TEXT } from "./rules.js";
import { object, pollerOptions, string } from "./options.js";
import { scheduleOptions, stepOptions } from "./step-options.js";
import { watchPage } from "./page.js";
import { transportOf } from "./push-transport.js";
import { summary } from "./summary.js";
import { checkTabOptions } from "./tab-options.js";

/**
 * The wasm module's glue with every option checked first (js/options.js): the wasm reads the
 * checked values as they are. The tab layer and the push transport build pollers from here too;
 * `pollStep` and `scheduleWorkflow` check theirs with js/step-options.js.
 */
function checking(glue) {
  const { JobPoller: Wasm } = glue;
  return {
    ...glue,
    // A class whose constructor returns the wasm poller: `new` gives that poller itself.
    JobPoller: class {
      constructor(options, receiver) {
        return new Wasm(pollerOptions(options), receiver);
      }
    },
    classifyWebhook: (payload, jobUid) => glue.classifyWebhook(object("payload", payload), jobUid),
    classifyV4Status: (status) => glue.classifyV4Status(string("status", status)),
  };
}

/**
 * Loads one wasm module, once, on first use. `load()` instantiates it and returns its glue (the
 * wasm-bindgen module); it may return a promise, or throw. `source` names where the module
 * comes from in a LOAD_FAILED message. `sync`: `load()` is synchronous, so the module loads at
 * the first constructor (Node, workerd). A failed load is not final: a later use tries again.
 */
function moduleLoader({ load: loadGlue, source, sync = false }) {
  const load = () => (sync ? checking(loadGlue()) : Promise.resolve(loadGlue()).then(checking));
  let loading = null; // the load in progress or done
  let glue = null; // once loaded
  let failure = null; // why the last synchronous load failed

  const failed = (cause) => {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new CaptainDataError("LOAD_FAILED", `could not load the WebAssembly module from ${source}: ${reason}`, { cause });
  };

  /** The glue if the module is ready (in a synchronous runtime it loads now); never throws. */
  function now() {
    if (!glue && sync) {
      try {
        glue = load();
      } catch (cause) {
        failure = failed(cause); // reported by start(); a later poller tries again
      }
    }
    return glue;
  }

  /** The glue once loaded; rejects with LOAD_FAILED, and a later call tries again. */
  function ready() {
    if (sync) return now() ? Promise.resolve(glue) : Promise.reject(failure);
    loading ??= (async () => {
      try {
        glue = await load();
        return glue;
      } catch (cause) {
        loading = null; // another poller or a later start() may succeed
        throw failed(cause);
      }
    })();
    return loading;
  }

  return { now, ready, failure: () => failure, failed };
}

/**
 * `poll` loads the module `JobPoller` runs on (see `moduleLoader`); `whole`, the one that also
 * has `pollStep` and `scheduleWorkflow`, when they are two (a page loads the smaller one to
 * poll; a JobPoller uses the whole one if a page loaded it already).
 * `share(options, { WasmJobPoller, delivery })` may return a shared poller (the tab layer),
 * called once the module is loaded; null means the lone `new WasmJobPoller(options, delivery)`.
 * A shared poller has `start()`, `stop()`, `cursor`, `role`, `webhookReceived(payload)` and
 * `free()`; it hands rows to `delivery.batch(batch)` (which throws or rejects when a consumer
 * failed) and statuses to `delivery.status(run)`. Its `start()` settles like the wasm poller's
 * (a summary, `status: "stopped"` after stop(), or a CaptainDataError); this class then calls
 * `onComplete`/`onError` through `delivery.end()`, so the shared poller never calls them.
 * `roleOf(options)` checks the options of that layer and gives the role until it is built
 * (without that layer: checks them, and the role is "alone").
 * `advise`: an error that got no response at all gets the browser's advice (most likely CORS;
 * elsewhere the message says no more than what happened), from js/advice.js.
 */
export function createApi({ poll, whole, share = () => null, roleOf = (options) => (checkTabOptions(options), "alone"), advise = false }) {
  const advised = async (error) => {
    if (advise && error?.message?.startsWith("no response")) error.message += (await import("./advice.js")).CORS_ADVICE;
    return error;
  };
  const polling = moduleLoader(poll);
  const everything = whole ? moduleLoader(whole) : polling;
  const sync = poll.sync === true;

  /** The module a JobPoller runs on, if one is ready. */
  const loadedNow = () => (everything === polling ? null : everything.now()) ?? polling.now();
  const load = () => {
    const module = loadedNow();
    return module ? Promise.resolve(module) : polling.ready();
  };

  async function pollStep(options) {
    const module = await everything.ready();
    const step = await module.pollStep(stepOptions(options));
    if (step.error) await advised(asCaptainDataError(step.error));
    return step;
  }

  async function scheduleWorkflow(connection, workflowUid, body) {
    try {
      const module = await everything.ready();
      const [checked, json] = scheduleOptions(connection, body);
      return await module.scheduleWorkflow(checked, workflowUid, json);
    } catch (error) {
      throw await advised(asCaptainDataError(error));
    }
  }

  class JobPoller {
    #options;
    #delivery;
    #inner = null; // the wasm poller, or a shared one; built once the module is loaded
    #loadError = null; // a synchronous load that failed in the constructor
    #started = null;
    #stopped = false;
    #halt; // resolves when stop() is called or the signal aborts
    #onHalt;
    #webhooks = []; // payloads received before the module loaded
    #role;
    #alone = false; // a wasm poller of its own (not shared): it is told about the page here
    #transport; // polling, or the worker's stream (js/push-transport.js)

    /** Validates the options now when the module is loaded (always in Node and workerd). */
    constructor(options) {
      this.#delivery = new Delivery(options);
      this.#transport = transportOf(options, this.#delivery, everything.ready);
      options = this.#transport?.options ?? options;
      this.#role = roleOf(options);
      this.#options = options;
      this.#halt = new Promise((resolve) => {
        this.#onHalt = resolve;
      });
      const module = loadedNow();
      if (module) this.#build(module);
      else if (sync) this.#loadError = polling.failure();
    }

    /** `"leader"`, `"follower"` or `"alone"`. */
    get role() {
      return this.#inner ? (this.#inner.role ?? "alone") : this.#role;
    }

    /** The resume token after the last confirmed batch (the given `cursor` before the load). */
    get cursor() {
      return this.#inner ? this.#inner.cursor : this.#options.cursor;
    }

    start() {
      this.#started ??= this.#run();
      return this.#started;
    }

    /**
     * Ends the poll quietly: nothing is sent after it, the batch in hand is finished first,
     * and start() resolves with a `"stopped"` summary.
     */
    stop() {
      this.#stopped = true;
      this.#inner?.stop();
      this.#onHalt({});
    }

    webhookReceived(payload) {
      object("payload", payload);
      if (this.#inner) return this.#inner.webhookReceived(payload);
      // Kept until the module is loaded; another run's payload is refused now, as it is then.
      const uid = payload.job_uid;
      if (uid != null && uid !== this.#options.jobUid) throw new TypeError(WEBHOOK_OF_ANOTHER_RUN_TEXT);
      this.#webhooks.push(payload);
      return undefined;
    }

    free() {
      this.#inner?.free();
    }

    /**
     * The async iterator (js/iterator.js) is loaded when a loop first asks for it: a page that
     * only takes callbacks never downloads it (docs/size.md). Meanwhile a batch waits for it
     * (the poller may be running already), then goes to its sink: none is missed.
     */
    [Symbol.asyncIterator]() {
      const delivery = this.#delivery;
      const loaded = import("./iterator.js").then(({ iterate }) => iterate(this, delivery));
      delivery.setSink((batch) => loaded.then(() => delivery.sink(batch)));
      return {
        next: () => loaded.then((it) => it.next()),
        return: () => loaded.then((it) => it.return()),
        throw: (error) => loaded.then((it) => it.throw(error)),
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    }

    #build({ JobPoller: WasmJobPoller }) {
      const delivery = this.#delivery;
      this.#inner = share(this.#options, { WasmJobPoller, delivery });
      if (!this.#inner) {
        this.#inner = new WasmJobPoller(this.#options, delivery);
        this.#alone = true;
      }
      for (const payload of this.#webhooks.splice(0)) {
        try {
          this.#inner.webhookReceived(payload);
        } catch (error) {
          this.#delivery.report(error, "webhookReceived"); // checked when received: not reached
        }
      }
    }

    async #run() {
      const t0 = Date.now();
      let outcome;
      try {
        outcome = await this.#poll(t0);
      } catch (error) {
        outcome = { error: await advised(asCaptainDataError(error)) };
      }
      if (outcome.error && !(outcome.error instanceof CaptainDataError)) throw outcome.error; // a TypeError
      // A failure is never silent: without onError, one console line (js/advice.js).
      if (outcome.error && !this.#options.onError) (await import("./advice.js")).logFailure(outcome.error);
      this.#delivery.end(outcome);
      if (outcome.error) throw outcome.error;
      return outcome.summary;
    }

    /** Loads the module if needed, then runs the poller: `{ summary }` or `{ error }`. */
    async #poll(t0) {
      const { signal } = this.#options;
      if (!this.#inner) {
        // Stopped or aborted already: nothing to load.
        if (this.#stopped) return { summary: this.#stoppedBeforeLoad(t0) };
        if (signal?.aborted === true) return { error: abortedError(signal.reason) };
        const abort = () => this.#onHalt({ aborted: true });
        signal?.addEventListener?.("abort", abort);
        let halted;
        let module;
        try {
          const loaded = this.#loadError ? Promise.reject(this.#loadError) : load();
          halted = await Promise.race([loaded.then((glue) => ((module = glue), null)), this.#halt]);
        } finally {
          signal?.removeEventListener?.("abort", abort);
        }
        if (halted?.aborted && !this.#stopped) return { error: abortedError(signal.reason) };
        if (halted) return { summary: this.#stoppedBeforeLoad(t0) };
        this.#build(module); // throws the TypeError of a bad option
        if (this.#stopped) this.#inner.stop();
      }
      const unwatch = this.#alone ? watchPage(this.#inner) : () => {};
      try {
        // The transport may hand over to a stream: `swap(next)` makes it this poller's, and says whether stop() came.
        const swap = (next) => ((this.#inner = next), this.#stopped);
        return { summary: await (this.#transport?.run(this.#inner, swap) ?? this.#inner.start()) };
      } catch (error) {
        // A shared poller stopped by our own stop() may still say ABORTED: it is a stop.
        if (error?.code === "ABORTED" && this.#stopped && !signal?.aborted) {
          return { summary: Object.freeze({ ...this.#stoppedBeforeLoad(t0), cursor: this.cursor }) };
        }
        throw error;
      } finally {
        unwatch();
      }
    }

    /** The summary of a poller stopped before the module loaded: nothing was sent. */
    #stoppedBeforeLoad(t0) {
      return summary({ durationMs: Date.now() - t0, cursor: this.cursor });
    }
  }

  /** The crate's one webhook classifier (src/api/webhook.rs); synchronous (a browser preloads first). */
  function classifyWebhook(payload, jobUid) {
    const module = loadedNow();
    if (!module) throw polling.failure() ?? polling.failed("not loaded yet (call preload() first)");
    return module.classifyWebhook(payload, jobUid);
  }

  /** The crate's v4 status classifier (src/api/v4_status.rs), in the module pollStep runs on. */
  async function classifyV4Status(status) {
    return (await everything.ready()).classifyV4Status(status);
  }

  /** Loads the module JobPoller runs on (pollStep and scheduleWorkflow load theirs). */
  const preload = () => load().then(() => undefined);

  return { JobPoller, preload, pollStep, scheduleWorkflow, classifyWebhook, classifyV4Status };
}
