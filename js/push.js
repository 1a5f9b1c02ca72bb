// Rows pushed by the worker's stream (`GET /v3/jobs/{uid}/stream`, worker/src/stream.js) to a
// JobPoller, loaded only when a stream is used. The same callbacks, iterator, cursor and
// outcome as polling: every batch goes through the poller's Delivery and is awaited before the
// next frame is read, and acked to the worker only then (backpressure: the worker sends a
// window of rows ahead of the acks, no more); the cursor is the engine's (the wasm
// `streamCursor`), so a poller resumed from it may poll or push. Frames waiting behind a slow
// onBatch are bounded too: a server that sends past its window gets the socket closed, and the
// stream reconnects from the last row delivered.
//
// A socket that drops (a deploy, a restart, the network) reconnects from the last row
// delivered after a jittered back-off (full jitter, as PartySocket, so that every viewer of a
// deploy does not come back at once); after `retry.retries` failures in a row the poller goes
// on by polling the worker from its cursor. Under push each tab keeps its own socket: a socket
// costs the API nothing (the worker reads Captain Data once per run whatever the audience), and
// a tab of its own gets rows without a hop through another tab.

import { CaptainDataError, abortedError } from "./errors.js";

const PROTOCOL = "captaindata-poller.v1";
/** Frames (and their characters) that may wait behind a slow onBatch; past either the socket is dropped. */
export const MAX_QUEUED_FRAMES = 64;
export const MAX_QUEUED_CHARS = 8 << 20;
/** A row sent in `part` frames is at most this long (a Durable Object's row is at most 2 MB). */
const MAX_ROW_CHARS = 16 << 20;
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
  #ack = null; // sends an ack after each batch, when the worker's hello asked for them
  #part = ""; // the text of a row coming in `part` frames
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
      // Rows known missing: the poller's own rules (the crate's) read the run's end, from here.
      if (outcome.incomplete) return this.#poll();
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

  /** One socket, until it ends: `{ end }`, `{ incomplete }`, `{ error }`, `{ refused }`, `{ stopped }` or `{ dropped, progressed }`. */
  #connect() {
    const { baseUrl, jobUid, headers } = this.#c.options;
    return new Promise((resolve) => {
      let ws;
      let settled = false;
      let progressed = false;
      let queue = Promise.resolve();
      let queued = 0;
      let queuedChars = 0;
      let overflowed = false;
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
      this.#pageSize = 0;
      this.#ack = null;
      this.#part = "";
      const ack = (offset) => {
        // A browser's send() on a closing socket does not throw: it logs a warning, and the
        // server that closed wants no ack anyway (OPEN is 1 in every WebSocket).
        if (ws.readyState !== 1) return;
        try {
          ws.send(JSON.stringify({ type: "ack", offset }));
        } catch {
          // closing: the drop follows
        }
      };
      // Frames are handled one after the other, each batch awaited (backpressure); a drop is
      // seen after the frames that came before it. A server that sends more than its window
      // while a batch is taken is dropped (reconnected from the last row delivered), not queued.
      ws.onmessage = (event) => {
        if (overflowed) return;
        const chars = typeof event.data === "string" ? event.data.length : (event.data?.byteLength ?? 0);
        queued += 1;
        queuedChars += chars;
        if (queued > MAX_QUEUED_FRAMES || queuedChars > MAX_QUEUED_CHARS) {
          // Read no more; the frames before this one are handled, then the stream reconnects.
          overflowed = true;
          try {
            ws.close(1000);
          } catch {
            // closed already
          }
          queue = queue.then(() => settle({ dropped: true, progressed }));
          return;
        }
        queue = queue.then(async () => {
          queued -= 1;
          queuedChars -= chars;
          if (settled) return;
          try {
            const outcome = await this.#frame(event.data, ack);
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
  async #frame(data, ack) {
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
        // A worker with flow control says so (its window); one without it takes no acks.
        this.#ack = isCount(frame.window) ? ack : null;
        return null;
      case "rows":
        return this.#rows(frame);
      case "part":
        return this.#partOf(frame);
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
    this.#ack?.(end);
    return null;
  }

  /** One piece of a row too large for a frame; the whole row is a batch of its own. */
  #partOf({ offset, text, last }) {
    if (!this.#pageSize) throw malformed("a part before the hello");
    if (!isCount(offset) || typeof text !== "string" || typeof last !== "boolean") throw malformed("a part without an offset or text");
    if (offset !== this.#offset) throw malformed(`a part of row ${offset} when ${this.#offset} was next`);
    this.#part += text;
    if (this.#part.length > MAX_ROW_CHARS) throw malformed(`a row of more than ${MAX_ROW_CHARS} characters`);
    if (!last) return null;
    let row;
    try {
      row = JSON.parse(this.#part);
    } catch {
      throw malformed("the parts of a row are not JSON");
    }
    this.#part = "";
    return this.#rows({ offset, rows: [row] });
  }

  #end({ run, error }) {
    if (run !== null && typeof run?.status !== "string") throw malformed("an end without a run");
    if (run) this.#statusOf(run);
    // A run that ended with rows known missing (the worker's `rows_missing`) is not the error
    // the frame names: polling the worker from the last row ends it as "incomplete".
    if (run?.rows_missing !== null && typeof run?.rows_missing === "object") return { incomplete: true };
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
