// classifyV4Status through the package (the crate's one v4 classifier, src/api/v4_status.rs),
// checked against what the simulator's v4 runs report and against the v3 poller's reading.
import assert from "node:assert/strict";
import { test } from "node:test";
import { classifyV4Status } from "captaindata-poller";
import { V4_STATUSES } from "../sim/v4-runs.js";

const EXPECTED = {
  CREATED: ["active", "pending", null],
  QUEUED: ["active", "pending", null],
  SCHEDULED: ["active", "pending", null],
  RUNNING: ["active", "running", null],
  BLOCKED: ["paused", "paused", null],
  SUCCEEDED: ["succeeded", "finished", null],
  PARTIAL_SUCCEEDED: ["succeeded", "warning", null],
  FAILED: ["failed", "shutdown", "JOB_FAILED"],
  STOPPED: ["failed", "stopped", "JOB_FAILED"],
  INVALID: ["failed", "shutdown", "ALL_INPUTS_FAILED"],
};

test("every v4 status the simulator knows is classified: class, the v3 status served, the final error", async () => {
  assert.deepEqual([...V4_STATUSES].sort(), Object.keys(EXPECTED).sort(), "the simulator and this table list the same statuses");
  for (const status of V4_STATUSES) {
    const seen = await classifyV4Status(status);
    assert.deepEqual([seen.class, seen.v3Status, seen.errorCode], EXPECTED[status], status);
    assert.ok(Object.isFrozen(seen));
    assert.deepEqual(await classifyV4Status(status.toLowerCase()), seen, "case-insensitive");
  }
});

test("an unknown status keeps the run active; a status that is not a string is a TypeError", async () => {
  assert.deepEqual({ ...(await classifyV4Status("ARCHIVED")) }, { class: "active", v3Status: "running", errorCode: null });
  await assert.rejects(classifyV4Status(undefined), { name: "TypeError", message: /Expected `status` to be a string/ });
});
