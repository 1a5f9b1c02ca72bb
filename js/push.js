// Rows pushed by the worker's stream (`GET /v3/jobs/{uid}/stream`, worker/src/stream.js) to a
// JobPoller, loaded only when a stream is used. The same callbacks, iterator, cursor and
// outcome as polling: every batch goes through the poller's Delivery and is awaited before the
// next frame is read (backpressure); the cursor is the engine's (the wasm `streamCursor`), so a
// poller resumed from it may poll or push.
//
// A socket that drops (a deploy, a restart, the network) reconnects from the last row
// delivered after a jittered back-off (full jitter, as PartySocket, so that every viewer of a
// deploy does not come back at once); after `retry.retries` failures in a row the poller goes
// on by polling the worker from its cursor. Under push each tab keeps its own socket: a socket
// costs the API nothing (the worker reads Captain Data once per run whatever the audience), and
// a tab of its own gets rows without a hop through another tab.

import { CaptainDataError, abortedError } from "./errors.js";

const PROTOCOL = "captaindata-poller.v1";
// The reconnect back-off when `retry` does not set it: quicker than polling's, a deploy is short.
const RECONNECT = { retries: 5, minDelayMs: 1000, maxDelayMs: 10000 };

/** BAD_RESPONSE for a frame that cannot be used: never skipped, since rows could be missing. */
const malformed = (why) => new CaptainDataError("BAD_RESPONSE", `malformed frame from the worker's stream: ${why}`);

const isCount = (n) => Number.isSafeInteger(n) && n >= 0;

/** The v3 run body of a status frame as `onStatus` receives it from polling. */
function runStatus(run) {
  const or = (value) => value ?? null;
  return Object.freeze({
    status: run.status,
    rowCount: or(run.row_count),
    totalRowCount: or(run.total_row_count),
    numberInputs: or(run.number_inputs),
    errorMessage: run.error_message || null,
    name: or(run.name),
    uid: or(run.uid),
    workflowUid: or(run.workflow_uid),
    startTime: or(run.start_time),
    finishTime: or(run.finish_time),
    retrying: null,
  });
}

/** `ws(s)://…/jobs/{uid}/stream?after=N` from the poller's `baseUrl` (the worker's). */
function streamUrl(baseUrl, jobUid, after) {
  const url = new URL(`${baseUrl.replace(/\/+$/, "")}/jobs/${encodeURIComponent(jobUid)}/stream`);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("after", String(after));
  return url.href;
}

/** The read token travels as a subprotocol, never in the URL (browsers cannot set headers). */
function protocols(headers) {
  const token = new Headers(headers ?? {}).get("x-read-token");
  return token ? [PROTOCOL, `token.${token}`] : [PROTOCOL];
}

/**
 * Receives the run from the worker's stream until it ends, the poller stops, or the socket
 * keeps failing (then polls). Resolves with the summary or rejects with a CaptainDataError, like
 * the wasm poller's `start()`. `first` is the wasm poller (stopped, or never started with
 * "push"), `swap(next)` makes `next` the JobPoller's and says whether stop() came, `polled` is
 * the summary of the polling before (null with "push").
 */
export default async function pushRows(options, delivery, whole, first, swap, polled) {
  const { transport, WebSocket: given, baseUrl } = options;
  if (transport !== "push" && transport !== undefined && transport !== "auto") throw new TypeError('Expected `transport` to be "poll", "push" or "auto"');
  if (given !== undefined && typeof given !== "function") throw new TypeError("Expected `WebSocket` to be a WebSocket constructor");
  const Socket = given ?? globalThis.WebSocket;
  if (!Socket) throw new TypeError("Expected `WebSocket` to be given: this runtime has none (Node 20: the `ws` package's)");
  if (!baseUrl) throw new TypeError("Expected `baseUrl` to be the worker's URL to use its stream");
  const glue = await whole();
  const stream = new Stream({ options, delivery, glue, Socket, polled, swap, fallback: transport !== "push", t0: Date.now() }, first.cursor);
  if (!polled) first.free(); // built to check the options, never started
  if (swap(stream)) stream.stop();
  return stream.run();
}

class Stream {
  role = "alone";
  #c;
  #glue;
  #offset;
  #pageSize = 0;
  #requests = 0;
  #reconnects = 0;
  #halted = null; // { stopped } or { error } once stop() or the signal ended it
  #wake = () => {}; // ends the wait in progress (a back-off, a socket)
  #status = ""; // the last status handed on, as JSON

  constructor(context, cursor) {
    this.#c = context;
    const glue = (this.#glue = context.glue);
    const { baseUrl, jobUid } = context.options;
    this.cursor = cursor === undefined ? glue.streamCursor(baseUrl, jobUid, 0, 1) : cursor;
    this.#offset = glue.cursorOffset(baseUrl, jobUid, this.cursor);
  }

  stop() {
    this.#halt({ stopped: true });
  }

  webhookReceived() {} // the worker receives the webhooks: its stream says what they changed

  free() {}

  #halt(how) {
    this.#halted ??= how;
    this.#wake();
  }

  async run() {
    const { signal } = this.#c.options;
    const abort = () => this.#halt({ error: abortedError(signal.reason) });
    if (signal?.aborted) abort();
    signal?.addEventListener?.("abort", abort);
    try {
      return await this.#receive();
    } finally {
      signal?.removeEventListener?.("abort", abort);
    }
  }

  async #receive() {
    const { retries, minDelayMs, maxDelayMs } = { ...RECONNECT, ...this.#c.options.retry };
    let failures = 0;
    for (;;) {
      const outcome = this.#halted ?? (await this.#connect());
      if (outcome.stopped) return this.#summary("stopped");
      if (outcome.error) throw outcome.error;
      if (outcome.end) return this.#summary(outcome.end);
      if (outcome.refused) {
        if (!this.#c.fallback) throw new CaptainDataError(outcome.refused.code, outcome.refused.message);
        return this.#poll(); // a full stream: "auto" polls the worker instead
      }
      // Dropped: a socket that delivered something starts the count again.
      failures = outcome.progressed ? 1 : failures + 1;
      if (failures > retries) return this.#poll();
      const delay = Math.random() * Math.min(maxDelayMs, minDelayMs * 2 ** (failures - 1));
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.#wake = () => (clearTimeout(timer), resolve());
      });
      this.#reconnects += 1;
    }
  }

  /** One socket, until it ends: `{ end }`, `{ error }`, `{ refused }`, `{ stopped }` or `{ dropped, progressed }`. */
  #connect() {
    const { baseUrl, jobUid, headers } = this.#c.options;
    return new Promise((resolve) => {
      let ws;
      let settled = false;
      let progressed = false;
      let queue = Promise.resolve();
      const settle = (outcome) => {
        if (settled) return;
        settled = true;
        this.#wake = () => {};
        try {
          ws?.close(1000);
        } catch {
          // closed already
        }
        resolve(outcome);
      };
      this.#wake = () => settle(this.#halted);
      try {
        ws = new this.#c.Socket(streamUrl(baseUrl, jobUid, this.#offset), protocols(headers));
      } catch {
        return settle({ dropped: true, progressed });
      }
      this.#requests += 1;
      // Frames are handled one after the other, each batch awaited (backpressure); a drop is
      // seen after the frames that came before it.
      ws.onmessage = (event) => {
        queue = queue.then(async () => {
          if (settled) return;
          try {
            const outcome = await this.#frame(event.data);
            if (outcome) settle(outcome);
            else progressed = true;
          } catch (error) {
            settle({ error });
          }
        });
      };
      ws.onclose = () => (queue = queue.then(() => settle({ dropped: true, progressed })));
      ws.onerror = () => {}; // a close follows
    });
  }

  /** Handles one frame; returns an outcome that ends the socket, or nothing. */
  async #frame(data) {
    if (typeof data !== "string") throw malformed("a binary message");
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      throw malformed("not JSON");
    }
    switch (frame?.type) {
      case "hello":
        if (frame.offset !== this.#offset || !isCount(frame.pageSize) || frame.pageSize < 1) throw malformed("a hello that does not match the request");
        this.#pageSize = frame.pageSize;
        return null;
      case "rows":
        return this.#rows(frame);
      case "status":
        if (typeof frame.run?.status !== "string") throw malformed("a status without a run");
        this.#statusOf(frame.run);
        return null;
      case "end":
        return this.#end(frame);
      case "error":
        if (typeof frame.code !== "string" || typeof frame.message !== "string") throw malformed("an error without a code");
        if (frame.code === "BAD_OFFSET") throw new CaptainDataError("BAD_RESPONSE", `the worker's stream refused the cursor: ${frame.message}`);
        return { refused: frame };
      default:
        throw malformed(`unknown type ${JSON.stringify(String(frame?.type)).slice(0, 40)}`);
    }
  }

  async #rows({ offset, rows }) {
    if (!this.#pageSize) throw malformed("rows before the hello");
    if (!Array.isArray(rows) || !isCount(offset)) throw malformed("rows without an offset");
    if (offset !== this.#offset) throw malformed(`rows from ${offset} when ${this.#offset} was next`);
    if (rows.length === 0) return null;
    const { baseUrl, jobUid } = this.#c.options;
    const end = offset + rows.length;
    const cursor = this.#glue.streamCursor(baseUrl, jobUid, end, this.#pageSize);
    try {
      await this.#c.delivery.batch(Object.freeze({ results: rows, offset, cursor }));
    } catch (cause) {
      if (this.#halted) return this.#halted; // refused after stop(): not an error
      const message = `onBatch (or the iterator) failed on rows ${offset}..${end}; the cursor stays before them`;
      return { error: new CaptainDataError("CALLBACK_FAILED", message, { cause }) };
    }
    // A batch still being taken when stop() came is not counted: the cursor stays before it.
    if (this.#halted) return this.#halted;
    this.#offset = end;
    this.cursor = cursor;
    return null;
  }

  #end({ run, error }) {
    if (run !== null && typeof run?.status !== "string") throw malformed("an end without a run");
    if (run) this.#statusOf(run);
    if (error) {
      if (typeof error.code !== "string") throw malformed("an end with an error without a code");
      return { error: new CaptainDataError(error.code, String(error.message ?? ""), run ? { runStatus: run.status } : {}) };
    }
    if (!run) throw malformed("an end without a run or an error");
    return { end: run.status };
  }

  #statusOf(run) {
    const status = runStatus(run);
    const text = JSON.stringify(status);
    if (text === this.#status) return;
    this.#status = text;
    this.#c.delivery.status(status);
  }

  #summary(status) {
    const polled = this.#c.polled;
    return Object.freeze({
      status,
      totalResults: this.#offset,
      requests: (polled?.requests ?? 0) + this.#requests,
      retries: (polled?.retries ?? 0) + this.#reconnects,
      durationMs: (polled?.durationMs ?? 0) + Date.now() - this.#c.t0,
      cursor: this.cursor,
    });
  }

  /** Polls the worker from the stream's cursor to the end (a lone wasm poller, its own fetch). */
  async #poll() {
    const { options, delivery, glue, swap, polled } = this.#c;
    const poller = new glue.JobPoller({ ...options, cursor: this.cursor }, delivery);
    if (swap(poller)) poller.stop();
    const summary = await poller.start();
    const requests = (polled?.requests ?? 0) + this.#requests + summary.requests;
    return Object.freeze({ ...summary, requests, durationMs: (polled?.durationMs ?? 0) + Date.now() - this.#c.t0 });
  }
}
