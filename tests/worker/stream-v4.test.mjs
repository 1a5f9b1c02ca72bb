// A v4 run's rows come by callbacks, not steps: they reach the stream's viewers the same way
// (RunTracker.publish), live, once each and in order, then the final frame.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { manualClock } from "../../sim/index.js";
import { rowIds } from "./worker-fixture.mjs";
import { advance as advanceClock, launchV4, startV4Worker } from "./v4-fixture.mjs";
import { ids, viewer } from "./stream-fixture.mjs";

let w;
const clock = manualClock(Date.now());
before(async () => {
  w = await startV4Worker({ clock, settings: { V4_STATUS_INTERVAL_MS: "200", V4_RECHECK_MS: "100" } });
});
after(() => w.close());

const advance = (ms, step) => advanceClock(w, clock, ms, step);

test("a v4 run's callback rows are pushed to its viewers as they are stored, then the end", async () => {
  w.sim.v4.setDefaults({ rows: 35, pageSize: 10, durationMs: 4000 });
  const res = await launchV4(w, { inputs: [{}] });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const { run_uid: runUid, read_token: token } = res.body;
  const v = viewer(w.origin, runUid, token);
  await v.opened;
  await advance(2000); // two pages came by callback
  await w.until(() => v.rows.length >= 20, "the first two pages pushed");
  assert.ok(v.frames.every((f) => f.type !== "end"), "the run is still going");
  await advance(2000);
  const end = await v.done;
  assert.equal(end.type, "end");
  assert.equal(end.run.status, "finished");
  assert.deepEqual(ids(v), rowIds(35));
});
