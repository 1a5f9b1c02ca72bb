// The stream of a run (`GET /v3/jobs/{uid}/stream`): a WebSocket held by the run's Durable
// Object with the hibernation API. A viewer gets the stored rows after its offset (the backlog),
// then each batch the object commits, the run's status changes and a final frame; the object
// then closes the socket. Nothing here keeps the object awake: no timer, no pending promise (an
// idle socket costs nothing; pings are answered without waking it).
//
// Frames (JSON text, each at most MAX_FRAME_BYTES):
//   {"type":"hello","offset":N,"pageSize":P}   first: the offset the stream starts at
//   {"type":"rows","offset":N,"rows":[…]}      rows N, N+1, … in order, each once
//   {"type":"status","run":{…}}                the run as `GET /v3/jobs/{uid}` shows it
//   {"type":"end","run":{…},"error":null|{code,message}}  the run is over; the socket closes
//   {"type":"error","code":"…","message":"…"}  refused (TOO_MANY_VIEWERS, BAD_OFFSET); closes

import { isMissing, runBody } from "./v3-shapes.js";

/** What a client offers in `Sec-WebSocket-Protocol`: the protocol, then `token.<read token>`. */
export const STREAM_PROTOCOL = "captaindata-poller.v1";
const TOKEN_PREFIX = "token.";
/** Sent with the run's reads: this server streams (Captain Data does not send it). */
export const STREAM_HEADER = "x-poller-stream";
const EPOCH_HEADER = "x-read-token-epoch";
/** The token epoch the Worker checked, as the object receives it. */
export const viewerEpoch = (request) => request.headers.get(EPOCH_HEADER);
/** Cloudflare's limit on one WebSocket message. */
export const MAX_FRAME_BYTES = 1 << 20;
// Close codes of the application range (4000–4999): 4000 + the HTTP status it would have been.
const CLOSE_REFUSED = { TOO_MANY_VIEWERS: 4429, BAD_OFFSET: 4416 };
const CLOSE_ENDED = 1000;

/** The read token a viewer presented as a subprotocol (browsers cannot set headers), or null. */
export function streamToken(request) {
  const offered = (request.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
  const token = offered.find((p) => p.startsWith(TOKEN_PREFIX));
  return offered.includes(STREAM_PROTOCOL) && token ? token.slice(TOKEN_PREFIX.length) : null;
}

/** The run's reads say that this server streams; a browser may read the header (CORS). */
export function advertiseStream(response) {
  response.headers.set(STREAM_HEADER, "v1");
  response.headers.append("access-control-expose-headers", STREAM_HEADER);
  return response;
}

/**
 * The Worker's half: checks the request and hands the upgrade to the run's object, whose
 * answer is copied (a response from `stub.fetch` has immutable headers; CORS adds some).
 */
export async function forwardStream(request, stub, epoch) {
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
  // The token's epoch goes to the object, which refuses a revoked one (as it does for reads).
  const headers = new Headers(request.headers);
  headers.set(EPOCH_HEADER, epoch);
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

/**
 * `rows` frames for the row texts starting at `offset`, each at most MAX_FRAME_BYTES (a row
 * larger than that alone cannot be split: it goes in a frame of its own).
 */
export function rowFrames(offset, texts) {
  const frames = [];
  let start = 0;
  while (start < texts.length) {
    const head = `{"type":"rows","offset":${offset + start},"rows":[`;
    let size = head.length + 2;
    let end = start;
    while (end < texts.length) {
      const more = utf8Length(texts[end]) + (end > start ? 1 : 0);
      if (end > start && size + more > MAX_FRAME_BYTES) break;
      size += more;
      end++;
    }
    frames.push(`${head}${texts.slice(start, end).join(",")}]}`);
    start = end;
  }
  return frames;
}

/** The run is over for a viewer (a run the worker gave up on is only paused: it may resume). */
function ended(run) {
  return Boolean(run.done) && (isMissing(run) || runBody(run).finish_time !== null);
}

/** What a JobPoller polling the worker would end with: nothing, or the error's code. */
function endError(run) {
  if (isMissing(run)) return { code: "NOT_FOUND", message: "Job not found" };
  const body = runBody(run);
  if (["finished", "warning"].includes(body.status)) return null;
  const code = run.error_code === "ALL_INPUTS_FAILED" ? "ALL_INPUTS_FAILED" : "JOB_FAILED";
  return { code, message: body.error_message ?? `The run ended as ${body.status}` };
}

const statusFrame = (run) => JSON.stringify({ type: "status", run: runBody(run) });
const endFrame = (run) => JSON.stringify({ type: "end", run: isMissing(run) ? null : runBody(run), error: endError(run) });

/** Refuses a viewer with a named error it can show, on a socket this object does not keep. */
function refuse(code, message) {
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  server.send(JSON.stringify({ type: "error", code, message }));
  server.close(CLOSE_REFUSED[code], code);
  return new Response(null, { status: 101, webSocket: client, headers: { "sec-websocket-protocol": STREAM_PROTOCOL } });
}

/**
 * The object's half, in one synchronous turn: no `await` between reading the backlog and
 * joining the viewers a commit is sent to, so no row can fall between the two.
 * @param {DurableObjectState} ctx
 * @param {SqlStorage} sql
 * @param {{ run?: object, missing?: boolean, refused?: boolean }} view the run for this viewer's
 *   token (RunTracker.readable): refused (revoked: a 403, no socket), missing (an end frame), or the run
 * @param {{ maxViewers: number, pageSize: number }} limits
 */
export function acceptViewer(ctx, sql, view, request, { maxViewers, pageSize }) {
  if (view.refused) return new Response(JSON.stringify({ message: "Not authorized" }), { status: 403, headers: { "content-type": "application/json" } });
  const run = view.run ?? null;
  const after = Number(new URL(request.url).searchParams.get("after") ?? "0");
  if (run && after > run.row_count) return refuse("BAD_OFFSET", `This run has ${run.row_count} rows: a stream cannot start after row ${after}`);
  if (ctx.getWebSockets().length >= maxViewers) return refuse("TOO_MANY_VIEWERS", `This run has its maximum of ${maxViewers} viewers (MAX_STREAM_VIEWERS)`);
  const [client, server] = Object.values(new WebSocketPair());
  ctx.acceptWebSocket(server);
  server.serializeAttachment({ after, since: Date.now() });
  // Readers' cursors count pages of the size the run was first served with (see resultsPage).
  const size = run?.page_size ?? pageSize;
  if (run && run.page_size === null) sql.exec("UPDATE run SET page_size = ? WHERE id = 1", size);
  server.send(JSON.stringify({ type: "hello", offset: after, pageSize: size }));
  if (!run) {
    server.send(endFrame({ done: 1, error_code: "NOT_FOUND" }));
    server.close(CLOSE_ENDED, "not found");
  } else {
    const texts = sql.exec("SELECT body FROM rows WHERE position >= ? ORDER BY position", after).toArray().map((r) => r.body);
    for (const frame of rowFrames(after, texts)) server.send(frame);
    server.send(statusFrame(run));
    if (ended(run)) {
      server.send(endFrame(run));
      server.close(CLOSE_ENDED, "run ended");
    }
  }
  return new Response(null, { status: 101, webSocket: client, headers: { "sec-websocket-protocol": STREAM_PROTOCOL } });
}

/**
 * After a commit: the new rows to every viewer, the status if a reader would see it changed,
 * and the end. Each frame is built once for all viewers.
 * @param {DurableObjectState} ctx
 * @param {object} before the run before the commit
 * @param {object} now the run after it
 * @param {unknown[]} rows the rows the commit stored, from `before.row_count` on
 */
export function publishCommit(ctx, before, now, rows) {
  const viewers = ctx.getWebSockets();
  if (viewers.length === 0) return;
  const frames = rowFrames(before.row_count, rows.map((row) => JSON.stringify(row)));
  const seen = JSON.stringify(runBody(before));
  if (JSON.stringify(runBody(now)) !== seen) frames.push(statusFrame(now));
  const over = ended(now);
  if (over) frames.push(endFrame(now));
  for (const ws of viewers) {
    try {
      for (const frame of frames) ws.send(frame);
      if (over) ws.close(CLOSE_ENDED, "run ended");
    } catch {
      // A socket that closed meanwhile: its viewer reconnects from its own offset.
    }
  }
}

/**
 * The run's tokens were revoked or the run was deleted: every viewer gets an end frame
 * (`UNAUTHORIZED` or `NOT_FOUND`, what its next read would answer) and the socket closes.
 */
export function dropViewers(ctx, why) {
  const error = why === "revoked" ? { code: "UNAUTHORIZED", message: "The read tokens of this run were revoked" } : { code: "NOT_FOUND", message: "Job not found" };
  const frame = JSON.stringify({ type: "end", run: null, error });
  for (const ws of ctx.getWebSockets()) {
    try {
      ws.send(frame);
      ws.close(CLOSE_ENDED, why);
    } catch {
      // closed meanwhile
    }
  }
}

/** A viewer sends nothing but pings (answered by the auto-response without waking the object). */
export function viewerMessage(ws) {
  ws.close(1003, "this stream takes no messages");
}

/** The viewer went away: complete the closing handshake. */
export function viewerClosed(ws, code) {
  try {
    ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
  } catch {
    // already closed
  }
}

/** "ping" is answered "pong" by the runtime, without waking a hibernating object. */
export function answerPings(ctx) {
  ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
}
