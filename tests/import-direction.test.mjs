// Arrows point down: the package, its tools and its services never import the tests. Code that a
// test and a script both need (the chaos campaign, the demo page's helpers) lives beside the
// script, and the tests import it from there.
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { root } from "../scripts/exec.mjs";

/** Folders that must not import from tests/ (everything that ships or runs outside a test). */
const NOT_TESTS = ["bench", "bin", "examples", "js", "scripts", "sim", "src", "worker", "www"];
const TESTS = path.join(root, "tests");
const SOURCE = /\.(m?js|cjs|ts|tsx|mts|html|svelte|vue|rs)$/;
const SKIPPED = new Set(["node_modules", "target", "dist", "pkg"]);

/** Every source file under `dir` (absolute paths). */
function sources(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : sources(full);
    return SOURCE.test(entry.name) ? [full] : [];
  });
}

const JS_SPECIFIERS = [
  /\b(?:import|export)\b[^;'"`]*?\bfrom\s*["'`]([^"'`]+)["'`]/g, // import … from "x", export … from "x"
  /\bimport\s*["'`]([^"'`]+)["'`]/g, // import "x"
  /\bimport\s*\(\s*["'`]([^"'`]+)["'`]/g, // import("x")
  /\brequire\s*\(\s*["'`]([^"'`]+)["'`]/g, // require("x")
  /\bnew\s+URL\s*\(\s*["'`]([^"'`]+)["'`]\s*,\s*import\.meta\.url/g, // new URL("x", import.meta.url)
];
const RUST_SPECIFIERS = [/\binclude_(?:str|bytes)!\s*\(\s*"([^"]+)"/g, /#\[path\s*=\s*"([^"]+)"\]/g];

/** What a file's text imports or includes, as written (`file` says which syntax). */
function specifiers(text, file) {
  const patterns = file.endsWith(".rs") ? RUST_SPECIFIERS : JS_SPECIFIERS;
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1]));
}

/** True when `specifier`, written in `file`, names something under tests/. */
function reachesTests(specifier, file) {
  if (!specifier.startsWith(".")) return /(^|\/)tests\//.test(specifier); // a served path or a package's
  const relative = path.relative(TESTS, path.resolve(path.dirname(file), specifier));
  return !relative.startsWith("..") && !path.isAbsolute(relative);
}

test("the extractor sees every form of import (so the check below cannot pass by seeing none)", () => {
  const js = [
    'import { a } from "../tests/a.js";',
    'export { b } from "./b.mjs";',
    'import "./c.js";',
    'const d = await import("../d.js");',
    "import {\n  e,\n} from '../e.js';",
    'const f = new URL("../f.wasm", import.meta.url);',
    'const g = require("./g.cjs");',
  ].join("\n");
  assert.deepEqual(specifiers(js, "x.mjs").sort(), ["../d.js", "../e.js", "../f.wasm", "../tests/a.js", "./b.mjs", "./c.js", "./g.cjs"]);
  assert.deepEqual(specifiers('const s = include_str!("../tests/x.json");\n#[path = "y.rs"]\nmod y;', "x.rs").sort(), ["../tests/x.json", "y.rs"]);
  assert.ok(reachesTests("../tests/support/until.mjs", path.join(root, "scripts", "x.mjs")));
  assert.ok(reachesTests("../../tests/demo/browser-fixture.mjs", path.join(root, "bench", "sub", "x.mjs")));
  assert.ok(!reachesTests("./chaos/campaign.js", path.join(root, "scripts", "x.mjs")));
  assert.ok(!reachesTests("../sim/index.js", path.join(root, "scripts", "x.mjs")));
});

test(`nothing under ${NOT_TESTS.join("/, ")}/ imports from tests/`, () => {
  const upward = [];
  let seen = 0;
  for (const dir of NOT_TESTS) {
    for (const file of sources(path.join(root, dir))) {
      for (const specifier of specifiers(readFileSync(file, "utf8"), file)) {
        seen += 1;
        if (reachesTests(specifier, file)) upward.push(`${path.relative(root, file)} imports ${specifier}`);
      }
    }
  }
  assert.ok(seen > 100, `only ${seen} imports found: is the extractor still reading these folders?`);
  assert.deepEqual(upward, [], "move what both need out of tests/ (beside the script or the simulator) and import it from there");
});

test("no export or import map of package.json points into tests/", () => {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const targets = JSON.stringify([pkg.exports, pkg.imports, pkg.bin, pkg.main, pkg.files]).match(/"[^"]*"/g) ?? [];
  assert.deepEqual(targets.filter((t) => /^"\.?\/?tests\//.test(t)), []);
});
