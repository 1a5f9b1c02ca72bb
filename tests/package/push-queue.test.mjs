// The push client's frames behind a slow onBatch are bounded: against a server that floods rows
// past its window, a JobPoller with transport "push" reads no more once MAX_QUEUED_FRAMES wait,
// closes the socket, delivers what it had, and reconnects from its last row: every row once and
// in order. It acks a batch once onBatch is done, never before.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import WebSocket, { WebSocketServer } from "ws";
import { JobPoller } from "captaindata-poller";
import { MAX_QUEUED_FRAMES } from "../../js/push.js";
import { until } from "../support/until.mjs";

const ROWS = 500;
const row = (i) => ({ id: `row-${i}` });
const run = { status: "finished", row_count: ROWS, finish_time: "2026-01-01T00:00:00Z" };
let server;
const sockets = []; // { after, acks, closedAt, sent }
before(async () => {
  server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  server.on("connection", (ws, request) => {
    const after = Number(new URL(request.url, "http://x").searchParams.get("after"));
    const socket = { after, acks: [], closed: false, sent: 0 };
    sockets.push(socket);
    ws.on("message", (data) => socket.acks.push(JSON.parse(String(data)).offset));
    ws.on("close", () => (socket.closed = true));
    ws.send(JSON.stringify({ type: "hello", offset: after, pageSize: 10, window: 1024 }));
    if (sockets.length === 1) {
      // The first socket: every row at once, one a frame, whatever the acks say.
      for (let i = after; i < ROWS; i++, socket.sent++) ws.send(JSON.stringify({ type: "rows", offset: i, rows: [row(i)] }));
    } else {
      ws.send(JSON.stringify({ type: "rows", offset: after, rows: Array.from({ length: ROWS - after }, (_, i) => row(after + i)) }));
      ws.send(JSON.stringify({ type: "end", run, error: null }));
    }
  });
});
after(() => server.close());

test("frames waiting behind a slow onBatch are bounded: the socket is dropped, and resumed from the last row", { timeout: 30000 }, async () => {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const batches = [];
  const poller = new JobPoller({
    jobUid: "run-queue",
    baseUrl: `http://127.0.0.1:${server.address().port}/v3`,
    transport: "push",
    WebSocket,
    retry: { retries: 3, minDelayMs: 5, maxDelayMs: 20 },
    async onBatch(batch) {
      batches.push(batch);
      if (batches.length === 1) await held; // the first batch takes its time
    },
  });
  const done = poller.start();
  // While the first batch is taken, the client stops reading and closes the socket.
  await until(() => sockets[0]?.closed, { everyMs: 20, timeoutMs: 10000, what: "the client to drop the flooding socket" });
  assert.equal(batches.length, 1, "nothing else was delivered meanwhile");
  assert.deepEqual(sockets[0].acks, [], "no ack before onBatch is done");
  release();
  const summary = await done;
  assert.equal(summary.status, "finished");
  const rows = batches.flatMap((b) => b.results);
  assert.deepEqual(rows.map((r) => r.id), Array.from({ length: ROWS }, (_, i) => `row-${i}`));
  // What waited when the client stopped reading was delivered; the rest came on the next socket.
  assert.ok(sockets[1].after >= 1 && sockets[1].after <= MAX_QUEUED_FRAMES + 1, `resumed after ${sockets[1].after}`);
  // (acks of the frames taken after the close are not sent: the socket is closing)
  await until(() => sockets[1].acks.length > 0, { everyMs: 10, timeoutMs: 5000, what: "the last batch's ack" });
  assert.deepEqual(sockets[1].acks, [ROWS]);
});
