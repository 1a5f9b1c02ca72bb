// A Next.js 16 App Router app as a user builds and deploys it: `next build` (its default bundler,
// Turbopack; TypeScript checked, strict), then `next start` on 127.0.0.1. Its route handlers run
// pollStep and a JobPoller on the server from what the build bundled.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { manualClock } from "../../sim/index.js";
import { stepThroughRun, useBuiltApp } from "./server-app-fixture.mjs";
import { requestsFor, rowIds, useSim } from "./sim-fixture.mjs";

const clock = manualClock(Date.now());
const ctx = useSim({ clock });
// No telemetry; and no network at all: the app loads no font from Google (next/font/google).
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: "1" };
const next = path.join(root, "node_modules", "next", "dist", "bin", "next");
const built = useBuiltApp("next", ctx, {
  buildArgs: [next, "build"],
  env: NEXT_ENV,
  serve: (port) => ({ args: [next, "start", "--hostname", "127.0.0.1", "--port", String(port)] }),
  ready: /Ready in/,
});

test("app/api/step/route.ts steps through a run: every row once, done only once the run is over", async () => {
  await stepThroughRun({ ...ctx, clock }, built.server);
});

test("app/api/run/route.ts reads a whole run with a JobPoller: every row once, finished", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1500, durationMs: 0, pageSize: 500 });
  const body = await built.server.getJson(`/api/run?job=${jobUid}`);
  assert.deepEqual(body.ids, rowIds(1500));
  assert.deepEqual([body.status, body.totalResults], ["finished", 1500]);
  const requests = requestsFor(ctx.sim, jobUid).length;
  assert.ok(requests >= 3 && requests <= 6, `${requests} requests for a finished run of three pages`);
  assert.doesNotMatch(built.server.output(), /error/i, "the server printed no error");
});
