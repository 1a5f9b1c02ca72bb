// A Next.js 16 App Router app as a user builds and deploys it: `next build` (its default bundler,
// Turbopack; TypeScript checked, strict), then `next start` on 127.0.0.1. Its route handlers run
// pollStep and a JobPoller on the server from what the build bundled.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { manualClock } from "../../sim/index.js";
import { build, connectionEnv, createApp, startServer, stepThroughRun } from "./server-app-fixture.mjs";
import { requestsFor, rowIds, useSim } from "./sim-fixture.mjs";

const clock = manualClock(Date.now());
const ctx = useSim({ clock });
// No telemetry; and no network at all: the app loads no font from Google (next/font/google).
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: "1" };
let app;
let server;

before(async () => {
  app = createApp("next");
  const next = path.join(root, "node_modules", "next", "dist", "bin", "next");
  await build([next, "build"], { cwd: app.dir, env: NEXT_ENV });
  const connection = connectionEnv(ctx.connection);
  server = await startServer((port) => ({ args: [next, "start", "--hostname", "127.0.0.1", "--port", String(port)], env: { ...NEXT_ENV, ...connection } }), {
    cwd: app.dir,
    ready: /Ready in/,
  });
});
after(async () => {
  await server?.close();
  app?.remove();
});

test("app/api/step/route.ts steps through a run: every row once, done only once the run is over", async () => {
  await stepThroughRun({ ...ctx, clock }, server);
});

test("app/api/run/route.ts reads a whole run with a JobPoller: every row once, finished", async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1500, durationMs: 0, pageSize: 500 });
  const body = await server.getJson(`/api/run?job=${jobUid}`);
  assert.deepEqual(body.ids, rowIds(1500));
  assert.deepEqual([body.status, body.totalResults], ["finished", 1500]);
  const requests = requestsFor(ctx.sim, jobUid).length;
  assert.ok(requests >= 3 && requests <= 6, `${requests} requests for a finished run of three pages`);
  assert.doesNotMatch(server.output(), /error/i, "the server printed no error");
});
