// The README's Vue component (examples/vue/Leads.vue) built by Vite for the server and rendered
// as Nuxt renders it: idle, and neither a request nor a wasm load.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { test } from "node:test";
import { build } from "vite";
import { root } from "../../scripts/exec.mjs";
import { settled, spyOnLoads } from "../bindings/ssr-spy.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));

test("examples/vue/Leads.vue server-rendered: idle: 0 rows, nothing loaded", async (t) => {
  const { default: vue } = await import("@vitejs/plugin-vue");
  const dir = mkdtempSync(path.join(tmpdir(), "captaindata-poller-vue-ssr-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(HERE, "apps", "vue-ssr"), dir, { recursive: true });
  cpSync(path.join(root, "examples", "vue", "Leads.vue"), path.join(dir, "Leads.vue"));
  mkdirSync(path.join(dir, "node_modules"));
  for (const dep of ["vue", "@vue"]) symlinkSync(path.join(root, "node_modules", dep), path.join(dir, "node_modules", dep), "dir");
  symlinkSync(root, path.join(dir, "node_modules", "captaindata-poller"), "dir");
  await build({
    root: dir,
    logLevel: "warn",
    configFile: false,
    plugins: [vue()],
    // The package stays a package (imported at run time, by its exports), as in a Nuxt server build.
    ssr: { external: ["captaindata-poller", "vue"] },
    build: { ssr: "entry-server.js", outDir: path.join(dir, "dist"), emptyOutDir: true, minify: false },
  });
  const seen = spyOnLoads();
  const { render } = await import(pathToFileURL(path.join(dir, "dist", "entry-server.mjs")).href);
  const html = await render("4c3f7d1e-9b2a-4e51-8d07-6a1f2c3b4d5e");
  assert.match(html.replace(/<!--[^>]*-->/g, "").replace(/\s+/g, " "), /<p> ?idle: 0 rows/, html);
  await settled(); // past the store's microtasks, nothing pending that could load
  assert.deepEqual(seen, [], "no fetch, no wasm");
});
