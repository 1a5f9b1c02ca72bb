// A failure is never silent: without an onError, the poller logs one console line naming the
// code and the message (no secret); with an onError, that callback is the app's, nothing logged.
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobPoller } from "captaindata-poller";
import { API_KEY, FAST, settle, useSim } from "./sim-fixture.mjs";

const ctx = useSim();

test("a failure without onError logs one line; with onError, none", async (t) => {
  const printed = [];
  t.mock.method(console, "error", (...args) => printed.push(args.join(" ")));
  const { jobUid } = ctx.sim.createJob({ rows: 10, durationMs: 0 });
  const wrongKey = { ...ctx.connection, apiKey: "sk_wrong_key_1234", jobUid, ...FAST };
  const alone = await settle(new JobPoller(wrongKey).start());
  assert.equal(alone.error?.code, "UNAUTHORIZED");
  assert.equal(printed.length, 1, printed.join(" / "));
  assert.match(printed[0], /^captaindata-poller: UNAUTHORIZED: HTTP 401/);
  assert.ok(!printed[0].includes("sk_wrong_key_1234") && !printed[0].includes(API_KEY), "no key in the line");

  const errors = [];
  const handled = await settle(new JobPoller({ ...wrongKey, onError: (error) => errors.push(error) }).start());
  assert.equal(handled.error?.code, "UNAUTHORIZED");
  assert.equal(errors.length, 1);
  assert.equal(printed.length, 1, "nothing more logged");
});
