// The README's Svelte 5 component rendered on a server as SvelteKit renders it (compiled with
// `generate: "server"`, `render()` from svelte/server): idle, and neither a request nor a wasm load.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { compile } from "svelte/compiler";
import { root } from "../../scripts/exec.mjs";
import { settled, spyOnLoads } from "../bindings/ssr-spy.mjs";

test("examples/svelte/Leads.svelte server-rendered: idle: 0 rows, nothing loaded", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "captaindata-poller-svelte-ssr-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, "node_modules"));
  symlinkSync(root, path.join(dir, "node_modules", "captaindata-poller"), "dir");
  symlinkSync(path.join(root, "node_modules", "svelte"), path.join(dir, "node_modules", "svelte"), "dir");
  const file = path.join(root, "examples", "svelte", "Leads.svelte");
  const { js, warnings } = compile(readFileSync(file, "utf8"), { generate: "server", filename: file });
  assert.deepEqual(warnings.map((w) => w.code), [], "no compiler warning (state_referenced_locally, …)");
  writeFileSync(path.join(dir, "Leads.js"), js.code);
  const seen = spyOnLoads();
  const { render } = await import("svelte/server");
  const { default: Leads } = await import(pathToFileURL(path.join(dir, "Leads.js")).href);
  const { body } = render(Leads, { props: { jobUid: "4c3f7d1e-9b2a-4e51-8d07-6a1f2c3b4d5e" } });
  const text = body.replace(/<!--[^>]*-->/g, "").replace(/\s+/g, " ");
  assert.match(text, /<p> ?idle: 0 rows/, body);
  await settled(); // past the store's microtasks, where a poller would start, nothing pending that could load
  assert.deepEqual(seen, [], "no fetch, no wasm");
});
