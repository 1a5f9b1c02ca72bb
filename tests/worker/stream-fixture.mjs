// Viewers of a run's stream over real sockets (the `ws` package: Node 20 has no WebSocket
// without --experimental-websocket), recording every frame the worker sends them.
import WebSocket from "ws";

export { WebSocket };
export const PROTOCOL = "captaindata-poller.v1";

/** The stream URL of a run on the worker at `origin`, from `after`. */
export const streamUrl = (origin, jobUid, after = 0) => `${origin.replace(/^http/, "ws")}/v3/jobs/${jobUid}/stream?after=${after}`;

/**
 * One raw viewer: `frames` (parsed), `rows` (every row of every rows frame, and of the parts of
 * one, in arrival order), `closed` (resolves with `{ code, reason }`), `opened` (resolves once
 * the handshake is done, rejects if it failed). It acks each piece of rows once taken, as the
 * stream asks (`ack: false`: never, a viewer that stalls; `keepFrames: false`: rows frames are
 * not kept in `frames`, only their rows, for big backlogs).
 */
export function viewer(origin, jobUid, token, { after = 0, protocols, ack = true, keepFrames = true } = {}) {
  const ws = new WebSocket(streamUrl(origin, jobUid, after), protocols ?? [PROTOCOL, `token.${token}`]);
  const v = { ws, frames: [], rows: [], bytes: 0, arrivals: [], acks: 0 };
  let parts = "";
  const taken = (offset, rows) => {
    v.rows.push(...rows);
    v.arrivals.push({ at: Date.now(), offset, n: rows.length });
    if (ack) {
      ws.send(JSON.stringify({ type: "ack", offset: offset + rows.length }));
      v.acks += 1;
    }
  };
  v.opened = new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`handshake refused: HTTP ${res.statusCode}`)));
    ws.once("error", reject);
  });
  v.opened.catch(() => {});
  v.closed = new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: String(reason) })));
  // The last frame (end, or a refusal) comes before the closing handshake, which a client need
  // not wait for (workerd ends the TCP connection some seconds later).
  let last;
  v.done = Promise.race([new Promise((resolve) => (last = resolve)), v.closed]);
  ws.on("message", (data) => {
    v.bytes += data.length;
    const frame = JSON.parse(String(data));
    if (keepFrames || !["rows", "part"].includes(frame.type)) v.frames.push(frame);
    if (frame.type === "rows") taken(frame.offset, frame.rows);
    if (frame.type === "part") {
      parts += frame.text;
      if (frame.last) taken(frame.offset, [JSON.parse(parts)]);
      if (frame.last) parts = "";
    }
    if (frame.type === "end" || frame.type === "error") last(frame);
  });
  return v;
}

/** The ids of a viewer's rows. */
export const ids = (v) => v.rows.map((r) => r.id);
