// The React, Vue and Svelte bindings as the package ships them: in the tarball with their types,
// reached through package.json `exports`, absent from the default entry, and typed (tsc on
// tests/bindings/types/usage.ts: generic rows, read-only state, the seven statuses).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { build } from "esbuild";
import { root } from "../../scripts/exec.mjs";

const BINDINGS = ["react", "vue", "svelte"];

test("the tarball holds each binding and its types, named by the exports map", () => {
  const out = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  const files = new Set(JSON.parse(out.stdout)[0].files.map((f) => f.path));
  const { exports, peerDependenciesMeta } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  for (const name of BINDINGS) {
    const entry = exports[`./${name}`];
    for (const file of [entry.types, entry.default, "dist/poller-store.js", "bindings.d.ts"]) {
      assert.ok(files.has(file.replace(/^\.\//, "")), `${file} is in the tarball`);
    }
  }
  assert.deepEqual(Object.keys(peerDependenciesMeta).sort(), [...BINDINGS].sort());
  // The bindings load the runtime's entry through "#captaindata-poller": the same files as ".".
  const { imports } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const { types, ...main } = exports["."];
  assert.deepEqual(imports["#captaindata-poller"], main);
  assert.ok(Object.values(peerDependenciesMeta).every((m) => m.optional));
});

/** Files of the package a bundle of `entry` pulls in (bare imports and the wasm left out). */
async function bundled(entry) {
  const { metafile } = await build({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "neutral",
    logLevel: "silent",
    external: ["react", "vue", "node:*", "*.wasm"],
  });
  return Object.keys(metafile.inputs);
}

test("no binding code in the default entries", async () => {
  for (const entry of ["dist/browser.js", "dist/node.js", "dist/workerd.js"]) {
    const inputs = await bundled(entry);
    const binding = inputs.filter((f) => /(react|vue|svelte|poller-store)\.js$/.test(f));
    assert.deepEqual(binding, [], `${entry} pulls in ${binding.join(", ")}`);
  }
});

test("tsc accepts tests/bindings/types/usage.ts and its @ts-expect-error lines stay errors", () => {
  const tsc = path.join(root, "node_modules", ".bin", "tsc");
  const out = spawnSync(tsc, ["--noEmit", "-p", path.join("tests", "bindings", "types")], { cwd: root, encoding: "utf8" });
  assert.equal(out.status, 0, out.stdout + out.stderr);
});
