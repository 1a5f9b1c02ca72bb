// A SvelteKit 2 app (adapter-node, Svelte 5) as a user builds and deploys it: `vite build`, then
// `node build` on 127.0.0.1. Its `+server.ts` endpoint runs pollStep on the server from what the
// build wrote (the package is bundled into it, its svelte peer makes it so; reading the .wasm by
// path failed there: `build/server/chunks/pkg/captaindata_poller_bg.wasm: ENOENT`), and its page
// server-renders the README's Svelte component: `idle`.
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";
import { manualClock } from "../../sim/index.js";
import { stepThroughRun, useBuiltApp } from "./server-app-fixture.mjs";
import { useSim } from "./sim-fixture.mjs";

const clock = manualClock(Date.now());
const ctx = useSim({ clock });
const built = useBuiltApp("sveltekit", ctx, {
  // The README's component as the page's (one text: examples/svelte/Leads.svelte).
  prepare: (dir) => cpSync(path.join(root, "examples", "svelte", "Leads.svelte"), path.join(dir, "src", "lib", "Leads.svelte")),
  buildArgs: [path.join(root, "node_modules", "vite", "bin", "vite.js"), "build"],
  serve: (port) => ({ args: ["build"], env: { HOST: "127.0.0.1", PORT: String(port) } }),
  ready: /Listening on /,
});

test("the page server-renders the README's Svelte component idle", async () => {
  const res = await fetch(built.server.origin, { signal: AbortSignal.timeout(30_000) });
  const html = await res.text();
  assert.equal(res.status, 200, html);
  const text = html.replace(/<!--[^>]*-->/g, "").replace(/\s+/g, " ");
  assert.match(text, /<p> ?idle: 0 rows/, html);
  assert.doesNotMatch(text, /loading|failed/, html);
});

test("the +server.ts endpoint steps through a run: every row once, done only once the run is over", async () => {
  await stepThroughRun({ ...ctx, clock }, built.server);
  assert.doesNotMatch(built.server.output(), /error/i, "the server printed no error");
});
