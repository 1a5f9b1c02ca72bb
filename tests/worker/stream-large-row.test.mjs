// A row over 1 MiB in UTF-8 (non-BMP text: 4 bytes a character) on the stream, in workerd: it
// comes in `part` frames of at most 1 MiB each, and a viewer, the package's JobPoller included,
// gets it whole, once, in its place among the other rows.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { manualClock } from "../../sim/index.js";
import { rowIds, startWorker } from "./worker-fixture.mjs";
import { ids, viewer, WebSocket } from "./stream-fixture.mjs";

const MIB = 1 << 20;
const BIG = "😀".repeat(380_000); // 1.52 MB of UTF-8 (a Durable Object's row holds at most 2 MB)
let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startWorker({ bindings: { POLL_INTERVAL_MS: "0" }, sim: { clock, webhook: null } });
  // Row 3 of every run gets the big text: the API's answer, changed on its way to the worker.
  w.hooks.intercept = async (request) => {
    if (!new URL(request.url).pathname.endsWith("/results")) return undefined;
    const answer = await w.sim.handle(new Request(request.url, { headers: request.headers }));
    const body = await answer.json();
    for (const row of body.results ?? []) if (row.id === "row-3") row.summary = BIG;
    return new Response(JSON.stringify(body), { status: answer.status, headers: { "content-type": "application/json" } });
  };
});
after(() => w.close());

test("a row over 1 MiB of emoji streams in part frames of at most 1 MiB; viewers and JobPoller get it whole", { timeout: 60000 }, async () => {
  const { jobUid } = w.sim.createJob({ rows: 8, durationMs: 0, pageSize: 8 });
  const token = await w.track(jobUid);
  await w.untilRun(jobUid, token, (run) => run.status === "finished", "finished");
  const sizes = [];
  const v = viewer(w.origin, jobUid, token);
  v.ws.on("message", (data) => sizes.push(data.length));
  await v.done;
  assert.deepEqual(ids(v), rowIds(8));
  assert.equal(v.rows[3].summary, BIG);
  const parts = v.frames.filter((f) => f.type === "part");
  assert.ok(parts.length >= 2, `${parts.length} part frames`);
  assert.ok(parts.every((p) => p.offset === 3));
  assert.ok(Math.max(...sizes) <= MIB, `largest frame ${Math.max(...sizes)} bytes`);

  const batches = [];
  const poller = new JobPoller({
    jobUid,
    baseUrl: `${w.origin}/v3`,
    headers: { "x-read-token": token },
    transport: "push",
    WebSocket,
    onBatch: (batch) => batches.push(batch),
  });
  const summary = await poller.start();
  assert.equal(summary.status, "finished");
  const rows = batches.flatMap((b) => b.results);
  assert.deepEqual(rows.map((r) => r.id), rowIds(8));
  assert.equal(rows[3].summary, BIG);
  assert.deepEqual(batches.find((b) => b.offset === 3).results.length, 1, "the big row is a batch of its own");
});
