// The stream of a run (`GET /v3/jobs/{uid}/stream`): a WebSocket held by the run's Durable
// Object with the hibernation API. A viewer gets the stored rows after its offset (the backlog),
// then each batch the object commits, the run's status changes and a final frame; the object
// then closes the socket. Nothing here keeps the object awake: no timer, no pending promise (an
// idle socket costs nothing; pings are answered without waking it).
//
// Flow control: a viewer acks the rows it has taken (`{"type":"ack","offset":N}`, N the offset
// after them). It has at most WINDOW_BYTES of rows sent and not acked (one larger row alone may
// pass that), and the object at most about OBJECT_WINDOW_BYTES across its viewers. Past that,
// the rows wait in storage: they are read from there a page at a time (SQL LIMIT, from the
// offset after the last row sent) as acks come. Neither the backlog's size nor a slow viewer
// grows the object's memory. A viewer that is behind gets the live rows the same way, from
// storage, so each row reaches it once and in order whatever comes in the meantime.
//
// Frames from the object (JSON text, each at most MAX_FRAME_BYTES in UTF-8 bytes):
//   {"type":"hello","offset":N,"pageSize":P,"window":W}  first: the offset the stream starts at
//   {"type":"rows","offset":N,"rows":[…]}      rows N, N+1, … in order, each once
//   {"type":"part","offset":N,"text":"…","last":false|true}  one row too large for a frame: its
//        JSON text in pieces, in order; row N is their concatenation, complete at `last: true`
//   {"type":"status","run":{…}}                the run as `GET /v3/jobs/{uid}` shows it
//   {"type":"end","run":{…}|null,"error":null|{code,message[,rows_missing]}}  the run is over, or the
//        stream is (UNAUTHORIZED: the token expired or was revoked; NOT_FOUND): the socket closes;
//        a run that ended with rows missing: its code (ROWS_MISSING, ROWS_CAP_REACHED) and `rows_missing`
//   {"type":"error","code":"…","message":"…"}  refused (TOO_MANY_VIEWERS, BAD_OFFSET); closes
// Frames from the viewer: acks only (anything else closes the socket, 1003).

import { TOKEN_REFUSED } from "./access.js";
import { isIncomplete } from "./limits.js";
import { isMissing, runBody } from "./v3-shapes.js";

/** What a client offers in `Sec-WebSocket-Protocol`: the protocol, then `token.<read token>`. */
export const STREAM_PROTOCOL = "captaindata-poller.v1";
const TOKEN_PREFIX = "token.";
/** Sent with the run's reads: this server streams (Captain Data does not send it). */
export const STREAM_HEADER = "x-poller-stream";
// What the Worker checked of the viewer's token, for the object (set by the Worker, never the client's).
const EPOCH_HEADER = "x-read-token-epoch";
const EXPIRY_HEADER = "x-read-token-expires";
const TOKEN_ID_HEADER = "x-read-token-id";
/** Cloudflare's limit on one WebSocket message. */
export const MAX_FRAME_BYTES = 1 << 20;
/** Rows a viewer may have been sent and not acked, in UTF-8 bytes (one larger row alone may pass it). */
export const WINDOW_BYTES = 1 << 20;
/** …and frames: keeps the socket's attachment (at most 2 KiB) small. */
const WINDOW_FRAMES = 8;
/** Rows sent and not acked across the object's viewers (give or take one frame): the rest wait in storage. */
export const OBJECT_WINDOW_BYTES = 8 << 20;
/** A backlog frame at most: a few fit in a window, so a viewer does not idle between its acks. */
const BACKLOG_FRAME_BYTES = 256 << 10;
/** Rows one read of the backlog looks at, at most (their sizes, then the bodies that fit). */
const PAGE_ROWS = 500;
// Close codes of the application range (4000–4999): 4000 + the HTTP status it would have been.
const CLOSE_REFUSED = { TOO_MANY_VIEWERS: 4429, BAD_OFFSET: 4416 };
const CLOSE_ENDED = 1000;
const EXPIRED = JSON.stringify({ type: "end", run: null, error: { code: "UNAUTHORIZED", message: "The read token of this stream expired" } });

/** The read token a viewer presented as a subprotocol (browsers cannot set headers), or null. */
export function streamToken(request) {
  const offered = (request.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
  const token = offered.find((p) => p.startsWith(TOKEN_PREFIX));
  return offered.includes(STREAM_PROTOCOL) && token ? token.slice(TOKEN_PREFIX.length) : null;
}

/** What the Worker checked of the viewer's token: its run's epoch, its expiry (ms), a digest naming it. */
export function viewerToken(request) {
  const expiresAt = Number(request.headers.get(EXPIRY_HEADER));
  return { epoch: request.headers.get(EPOCH_HEADER), expiresAt: Number.isFinite(expiresAt) ? expiresAt : 0, id: request.headers.get(TOKEN_ID_HEADER) ?? "" };
}

/** The run's reads say that this server streams; a browser may read the header (CORS). */
export function advertiseStream(response) {
  response.headers.set(STREAM_HEADER, "v1");
  response.headers.append("access-control-expose-headers", STREAM_HEADER);
  return response;
}

/** A short name for a token (the first 96 bits of its SHA-256): the object counts sockets by it, never holding the token. */
async function tokenId(token) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token ?? "")));
  return btoa(String.fromCharCode(...digest.subarray(0, 12)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
}

/**
 * The Worker's half: checks the request and hands the upgrade to the run's object, whose
 * answer is copied (a response from `stub.fetch` has immutable headers; CORS adds some).
 * @param {{ epoch: string, expiresAt: number }} claims the viewer's read token, checked
 */
export async function forwardStream(request, stub, claims) {
  if ((request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") {
    return new Response(JSON.stringify({ message: "This route is a WebSocket: send `Upgrade: websocket`" }), {
      status: 426,
      headers: { "content-type": "application/json", upgrade: "websocket" },
    });
  }
  const after = new URL(request.url).searchParams.get("after") ?? "0";
  if (!/^\d{1,15}$/.test(after)) {
    return new Response(JSON.stringify({ message: "`after` must be an integer ≥ 0" }), { status: 400, headers: { "content-type": "application/json" } });
  }
  // The object refuses a revoked epoch (as for reads), closes the socket at the token's expiry
  // and counts sockets per token: what the Worker checked goes with the request.
  const headers = new Headers(request.headers);
  headers.set(EPOCH_HEADER, claims.epoch);
  headers.set(EXPIRY_HEADER, String(claims.expiresAt));
  headers.set(TOKEN_ID_HEADER, await tokenId(streamToken(request)));
  const answer = await stub.fetch(new Request(request.url, { headers }));
  return new Response(answer.body, { status: answer.status, headers: new Headers(answer.headers), webSocket: answer.webSocket });
}

/** UTF-8 length of a string without encoding it. */
function utf8Length(text) {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00) {
      bytes += 2; // a surrogate pair: 4 bytes for its 2 units
      i++;
    } else if (c >= 0x800) bytes += 2;
    else if (c >= 0x80) bytes += 1;
  }
  return bytes;
}

/** UTF-8 bytes of the UTF-16 unit `c` once escaped in a JSON string (an upper bound; a pair's high half counts the pair). */
function escapedLength(c) {
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x20) return 6;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c < 0xe000) return 6; // a pair (4 bytes) or a lone half (\uXXXX)
  return 3;
}

const rowsHead = (offset) => `{"type":"rows","offset":${offset},"rows":[`;
const partFrame = (offset, text, last) => `{"type":"part","offset":${offset},"text":${JSON.stringify(text)},"last":${last}}`;

/**
 * The `part` frames of one row too large for a frame: its JSON text cut (never inside a
 * surrogate pair) so that each frame, escaped, is at most MAX_FRAME_BYTES.
 */
function partPiece(offset, text) {
  const room = MAX_FRAME_BYTES - partFrame(offset, "", false).length;
  const frames = [];
  let bytes = 0;
  for (let start = 0; start < text.length; ) {
    let size = 0;
    let end = start;
    while (end < text.length) {
      const c = text.charCodeAt(end);
      const units = c >= 0xd800 && c < 0xdc00 && end + 1 < text.length ? 2 : 1;
      if (size + escapedLength(c) > room) break;
      size += escapedLength(c);
      end += units;
    }
    const frame = partFrame(offset, text.slice(start, end), end >= text.length);
    frames.push(frame);
    bytes += utf8Length(frame);
    start = end;
  }
  return { frames, end: offset + 1, bytes };
}

/**
 * The pieces that carry the row texts starting at `offset`: each a `rows` frame of at most
 * `maxBytes` (a row larger than that goes alone in one of at most MAX_FRAME_BYTES), or the
 * `part` frames of one row larger than MAX_FRAME_BYTES. `end`: the offset after the piece's
 * rows; `bytes`: its frames' size in UTF-8.
 * @returns {{ frames: string[], end: number, bytes: number }[]}
 */
export function rowPieces(offset, texts, maxBytes = MAX_FRAME_BYTES) {
  const pieces = [];
  let start = 0;
  while (start < texts.length) {
    const head = rowsHead(offset + start);
    let bytes = head.length + 2 + utf8Length(texts[start]);
    if (bytes > MAX_FRAME_BYTES) {
      pieces.push(partPiece(offset + start, texts[start]));
      start += 1;
      continue;
    }
    let end = start + 1;
    while (end < texts.length) {
      const more = utf8Length(texts[end]) + 1;
      if (bytes + more > maxBytes) break;
      bytes += more;
      end++;
    }
    pieces.push({ frames: [`${head}${texts.slice(start, end).join(",")}]}`], end: offset + end, bytes });
    start = end;
  }
  return pieces;
}

/** The frames of `rowPieces`, in order. */
export const rowFrames = (offset, texts) => rowPieces(offset, texts).flatMap((piece) => piece.frames);

/** The run is over for a viewer (a run the worker gave up on is only paused: it may resume). */
function ended(run) {
  return Boolean(run.done) && (isMissing(run) || runBody(run).finish_time !== null);
}

/** What a JobPoller polling the worker would end with: nothing, or the error's code. */
function endError(run) {
  if (isMissing(run)) return { code: "NOT_FOUND", message: "Job not found" };
  const body = runBody(run);
  if (["finished", "warning"].includes(body.status)) return null;
  const message = body.error_message ?? `The run ended as ${body.status}`;
  // Ended with rows missing: the code and what is missing, as GET /jobs/{uid} serves them.
  if (isIncomplete(run.error_code)) return { code: run.error_code, message, rows_missing: body.rows_missing };
  const code = run.error_code === "ALL_INPUTS_FAILED" ? "ALL_INPUTS_FAILED" : "JOB_FAILED";
  return { code, message };
}

const statusFrame = (run) => JSON.stringify({ type: "status", run: runBody(run) });
const endFrame = (run) => JSON.stringify({ type: "end", run: isMissing(run) ? null : runBody(run), error: endError(run) });
const upgraded = (client) => new Response(null, { status: 101, webSocket: client, headers: { "sec-websocket-protocol": STREAM_PROTOCOL } });

/** Refuses a viewer with a named error it can show, on a socket this object does not keep. */
function refuse(code, message) {
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  server.send(JSON.stringify({ type: "error", code, message }));
  server.close(CLOSE_REFUSED[code], code);
  return upgraded(client);
}

/** The offset an ack names, or null for anything that is not an ack. */
function ackOffset(data) {
  if (typeof data !== "string" || data.length > 100) return null;
  try {
    const frame = JSON.parse(data);
    return frame?.type === "ack" && Number.isSafeInteger(frame.offset) && frame.offset >= 0 ? frame.offset : null;
  } catch {
    return null;
  }
}

/**
 * A viewer's state, in its socket's attachment (it survives hibernation): `next` the offset of
 * the next row to send it, `inflight` the `[end, bytes]` of the pieces sent and not acked,
 * `behind` whether rows wait in storage for it (once caught up it gets the status), `expiresAt`
 * its token's expiry (ms), `closed` once the object closed the socket.
 */
const isViewer = (state) => typeof state?.next === "number" && Array.isArray(state.inflight) && !state.closed;
const inflightBytes = (state) => state.inflight.reduce((sum, [, bytes]) => sum + bytes, 0);

/** A run's viewers: they join, get the rows in bounded pieces as they ack, and leave. */
export class StreamViewers {
  /**
   * @param {DurableObjectState} ctx
   * @param {SqlStorage} sql
   * @param {() => object | null} load the stored run
   */
  constructor(ctx, sql, load) {
    Object.assign(this, { ctx, sql, load });
    // Bytes sent and not acked across the viewers; null: counted again from the attachments
    // (after a wake, the instance is new).
    this.unacked = null;
    // Whether a viewer may wait for room in the object's window: looked at on the next ack.
    this.starved = true;
  }

  /**
   * A viewer joins, in one synchronous turn: the hello, the first backlog pieces its window
   * allows, and (when it is caught up already) the status. A commit runs in its own turn and
   * finds the viewer with the offset it has reached.
   * @param {{ run?: object, missing?: boolean, refused?: boolean }} view the run for this viewer's
   *   token (RunTracker.readable): refused (revoked: a 403, no socket), missing (an end frame), or the run
   * @param {{ maxViewers: number, maxViewersPerToken: number, pageSize: number }} limits
   */
  accept(view, request, { maxViewers, maxViewersPerToken, pageSize }) {
    if (view.refused) return new Response(JSON.stringify({ message: TOKEN_REFUSED }), { status: 403, headers: { "content-type": "application/json" } });
    const run = view.run ?? null;
    const after = Number(new URL(request.url).searchParams.get("after") ?? "0");
    if (run && after > run.row_count) return refuse("BAD_OFFSET", `This run has ${run.row_count} rows: a stream cannot start after row ${after}`);
    if (this.ctx.getWebSockets().length >= maxViewers) return refuse("TOO_MANY_VIEWERS", `This run has its maximum of ${maxViewers} viewers (MAX_STREAM_VIEWERS)`);
    const token = viewerToken(request);
    const tag = `token:${token.id}`;
    if (this.ctx.getWebSockets(tag).length >= maxViewersPerToken) {
      return refuse("TOO_MANY_VIEWERS", `This read token has its maximum of ${maxViewersPerToken} open streams of this run (MAX_STREAM_VIEWERS_PER_TOKEN)`);
    }
    const [client, server] = Object.values(new WebSocketPair());
    this.ctx.acceptWebSocket(server, [tag]);
    // Readers' cursors count pages of the size the run was first served with (see resultsPage).
    const size = run?.page_size ?? pageSize;
    if (run && run.page_size === null) this.sql.exec("UPDATE run SET page_size = ? WHERE id = 1", size);
    server.send(JSON.stringify({ type: "hello", offset: after, pageSize: size, window: WINDOW_BYTES }));
    if (!run) {
      server.send(endFrame({ done: 1, error_code: "NOT_FOUND" }));
      server.close(CLOSE_ENDED, "not found");
      return upgraded(client);
    }
    const state = { since: Date.now(), expiresAt: token.expiresAt, next: after, behind: true, inflight: [] };
    this.#pump(server, state, run);
    this.#save(server, state);
    return upgraded(client);
  }

  /**
   * After a commit: the new rows to every viewer that is caught up and has room (each piece
   * built once for all of them), then the status if a reader would see it changed, and the end.
   * A viewer without room, or behind already, gets them from storage as it acks.
   * @param {object} before the run before the commit
   * @param {object} now the run after it
   * @param {unknown[]} rows the rows the commit stored, from `before.row_count` on
   */
  publish(before, now, rows) {
    const viewers = this.ctx.getWebSockets();
    if (viewers.length === 0) return;
    let live = null;
    const changed = JSON.stringify(runBody(now)) !== JSON.stringify(runBody(before));
    for (const ws of viewers) {
      try {
        const state = ws.deserializeAttachment();
        if (!isViewer(state) || this.#expired(ws, state)) continue;
        if (!state.behind && state.next === before.row_count) {
          live ??= rowPieces(before.row_count, rows.map((row) => JSON.stringify(row)));
          for (const piece of live) {
            if (!this.#fits(state, piece.bytes)) {
              state.behind = true; // the rest of the commit waits in storage
              break;
            }
            this.#send(ws, state, piece);
          }
          if (!state.behind) this.#caughtUp(ws, state, now, changed);
        } else {
          state.behind = true;
          this.#pump(ws, state, now);
        }
        this.#save(ws, state);
      } catch {
        // A socket that closed meanwhile: its viewer reconnects from its own offset.
      }
    }
  }

  /** A viewer's frame: an ack frees its window (and maybe the object's), and the next pieces go. */
  message(ws, data) {
    const state = ws.deserializeAttachment();
    const offset = ackOffset(data);
    if (!isViewer(state) || offset === null || offset > state.next) {
      this.#finish(ws, state, 1003, "this stream takes acks of the rows it sent only");
      return;
    }
    let freed = 0;
    state.inflight = state.inflight.filter(([end, bytes]) => (end <= offset ? ((freed += bytes), false) : true));
    this.#release(freed);
    if (this.#expired(ws, state)) return;
    const run = this.load();
    if (!run) return; // deleted: its viewers were dropped
    if (state.behind) this.#pump(ws, state, run);
    this.#save(ws, state);
    if (this.starved) this.#feedStarved(run);
  }

  /** The viewer went away: its window is freed and the closing handshake completed. */
  closed(ws, code) {
    try {
      const state = ws.deserializeAttachment();
      if (isViewer(state)) this.#release(inflightBytes(state));
    } catch {
      // no attachment
    }
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
    } catch {
      // already closed
    }
    const run = this.starved ? this.load() : null;
    if (run) this.#feedStarved(run);
  }

  /**
   * The run's tokens were revoked or the run was deleted: every viewer gets an end frame
   * (`UNAUTHORIZED` or `NOT_FOUND`, what its next read would answer) and the socket closes.
   */
  drop(why) {
    const error = why === "revoked" ? { code: "UNAUTHORIZED", message: "The read tokens of this run were revoked" } : { code: "NOT_FOUND", message: "Job not found" };
    const frame = JSON.stringify({ type: "end", run: null, error });
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(frame);
        ws.close(CLOSE_ENDED, why);
      } catch {
        // closed meanwhile
      }
    }
    this.unacked = null;
  }

  /** Sends from storage what the windows allow; once the viewer is caught up, the status (and the end). */
  #pump(ws, state, run) {
    while (state.next < run.row_count) {
      const piece = this.#readPiece(state);
      if (!piece) return;
      this.#send(ws, state, piece);
    }
    if (state.behind) this.#caughtUp(ws, state, run, true);
  }

  /**
   * The next piece of the viewer's backlog that fits its window, or null to wait for acks: the
   * sizes of up to PAGE_ROWS rows first, then only the bodies that fit (one row at least).
   */
  #readPiece(state) {
    const room = this.#room(state);
    if (room === 0) return null;
    const limit = Math.min(room, BACKLOG_FRAME_BYTES);
    const sql = "SELECT length(CAST(body AS BLOB)) AS n FROM rows WHERE position >= ? ORDER BY position LIMIT ?";
    const sizes = this.sql.exec(sql, state.next, PAGE_ROWS).toArray();
    let bytes = rowsHead(state.next).length + 2;
    let count = 0;
    for (const { n } of sizes) {
      const more = n + (count > 0 ? 1 : 0);
      if (count > 0 && bytes + more > limit) break;
      bytes += more;
      count++;
    }
    if (count === 0 || !this.#fits(state, bytes)) return null;
    const texts = this.sql
      .exec("SELECT body FROM rows WHERE position >= ? AND position < ? ORDER BY position", state.next, state.next + count)
      .toArray()
      .map((r) => r.body);
    const pieces = rowPieces(state.next, texts, Math.max(limit, bytes));
    return { frames: pieces.flatMap((p) => p.frames), end: pieces.at(-1).end, bytes: pieces.reduce((sum, p) => sum + p.bytes, 0) };
  }

  /** Bytes the viewer may be sent now: what its window has left, 0 while its or the object's is full. */
  #room(state) {
    const mine = inflightBytes(state);
    if (state.inflight.length >= WINDOW_FRAMES || mine >= WINDOW_BYTES) return 0;
    if ((this.unacked ?? this.#recount()) >= OBJECT_WINDOW_BYTES) {
      this.starved = true;
      return 0;
    }
    return WINDOW_BYTES - mine;
  }

  /** Whether a piece of `bytes` may go: within the room left, or alone in an empty window. */
  #fits(state, bytes) {
    const room = this.#room(state);
    return room > 0 && (bytes <= room || state.inflight.length === 0);
  }

  #send(ws, state, piece) {
    for (const frame of piece.frames) ws.send(frame);
    state.inflight.push([piece.end, piece.bytes]);
    state.next = piece.end;
    if (this.unacked !== null) this.unacked += piece.bytes;
  }

  /** The viewer has every stored row: the status (when it may not have it), then the end if the run is over. */
  #caughtUp(ws, state, run, status) {
    state.behind = false;
    if (status) ws.send(statusFrame(run));
    if (ended(run)) {
      ws.send(endFrame(run));
      this.#finish(ws, state, CLOSE_ENDED, "run ended");
    }
  }

  /** A socket whose token has expired gets UNAUTHORIZED and is closed, before any other frame. */
  #expired(ws, state) {
    if (Date.now() < state.expiresAt) return false;
    ws.send(EXPIRED);
    this.#finish(ws, state, CLOSE_ENDED, "token expired");
    return true;
  }

  /** Closes a socket from this side; its window is freed. */
  #finish(ws, state, code, reason) {
    if (isViewer(state)) {
      this.#release(inflightBytes(state));
      state.inflight = [];
      state.closed = true;
      this.#save(ws, state);
    }
    try {
      ws.close(code, reason);
    } catch {
      // closed already
    }
  }

  #save(ws, state) {
    try {
      ws.serializeAttachment(state);
    } catch {
      // closed meanwhile
    }
  }

  #release(bytes) {
    if (this.unacked !== null) this.unacked = Math.max(0, this.unacked - bytes);
  }

  #recount() {
    let sum = 0;
    for (const ws of this.ctx.getWebSockets()) {
      try {
        const state = ws.deserializeAttachment();
        if (isViewer(state)) sum += inflightBytes(state);
      } catch {
        // closed meanwhile
      }
    }
    this.unacked = sum;
    return sum;
  }

  /** Room came in the object's window: the viewers that waited for it (nothing in flight, rows waiting) get theirs. */
  #feedStarved(run) {
    this.starved = false;
    this.#recount();
    for (const ws of this.ctx.getWebSockets()) {
      if (this.starved) return; // full again: the next ack goes on
      try {
        const state = ws.deserializeAttachment();
        if (!isViewer(state) || !state.behind || state.inflight.length > 0 || this.#expired(ws, state)) continue;
        this.#pump(ws, state, run);
        this.#save(ws, state);
      } catch {
        // closed meanwhile
      }
    }
  }
}

/** "ping" is answered "pong" by the runtime, without waking a hibernating object. */
export function answerPings(ctx) {
  ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
}
