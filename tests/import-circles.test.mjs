// No import circle: among the crate's modules, and among the JS files of the package, the worker,
// the CLI, the simulator, the demo, the scripts and the benches. A circle means two files that
// cannot be understood, tested or moved one without the other; what both need belongs to one of
// them (the one that owns it), or to a third both import.
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { root } from "../scripts/exec.mjs";
import { circles, describeCircle, jsImportGraph, jsSpecifiers, packageSelfImport, rustFileItems, rustModuleGraph } from "./support/import-graphs.mjs";

const JS_DIRS = ["js", "worker/src", "bin", "sim", "www", "scripts", "bench"];
const SKIPPED = new Set(["node_modules", "target", "dist", "pkg", "results", ".svelte-kit", ".next", "build"]);

/** Every .js/.mjs/.cjs file under `dir` (relative to the root, with `/`). */
function jsFiles(dir) {
  const abs = path.join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : jsFiles(rel);
    return /\.[cm]?js$/.test(entry.name) ? [rel] : [];
  });
}

const edgeCount = (graph) => [...graph.values()].reduce((n, edges) => n + edges.length, 0);
const failure = (found) => `import circle${found.length > 1 ? "s" : ""}:\n  ${found.map(describeCircle).join("\n  ")}\nmove what both files need to the one that owns it`;

test("the Rust reader sees use groups, pub use, paths in code, and not comments or strings", () => {
  const text = [
    "//! [`crate::docs::Only`] in a doc comment",
    "use alloc::string::String;",
    "use crate::a::{b, c::{d, e as f}, g::*, self};",
    "pub use super::h::H;",
    'const S: &str = "use crate::in_a_string::X;";',
    "const R: &str = r#\"crate::raw::Y\"#;",
    "fn x<'a>(c: char) -> bool { c == '\"' && crate::i::j(1) }",
    "/* use crate::in_a /* nested */ comment::Z; */",
    '#[path = "other.rs"]',
    "mod k;",
    "#[cfg(test)]",
    "mod tests {",
    "    use super::*;",
    "}",
  ].join("\n");
  const { uses, declared, inline } = rustFileItems(text);
  const seen = uses.map((u) => `${u.module.join("/")}|${u.segments.join("::")}${u.glob ? "::*" : ""}${u.public ? " pub" : ""}`);
  assert.deepEqual(seen, [
    "|alloc::string::String",
    "|crate::a::b",
    "|crate::a::c::d",
    "|crate::a::c::e",
    "|crate::a::g::*",
    "|crate::a",
    "|super::h::H pub",
    "|crate::i::j",
    "tests|super::*",
  ]);
  assert.equal(uses.find((u) => u.segments.at(-1) === "e").name, "f");
  assert.deepEqual(declared.map((d) => [d.name, d.pathAttr]), [["k", "other.rs"]]);
  assert.deepEqual(inline, [[], ["tests"]]);
});

test("the JS reader sees every form of import, JSDoc types included, and not strings, templates or comments", () => {
  const text = [
    'import a from "./a.js";',
    'export { b } from "./b.mjs";',
    'export * from "./c.js";',
    'import "./d.js";',
    'const e = await import("./e.js");',
    'const f = require("./f.cjs");',
    'const g = new URL("./g.js", import.meta.url);',
    '/** @typedef {import("./h.js").H} H */',
    '/** @import { I } from "./i.js" */',
    '/** @param {{ j: import("./j.js").J }} p */',
    "function k(p) { return /^[\\w./-]+$/.test(p) ? `'${p.replaceAll(\"'\", `'\\\\''`)}'` : p; }",
    'const l = "import(\'./not-l.js\')"; // import("./not-m.js")',
    "const n = `import(\"./not-n.js\")`;",
  ].join("\n");
  const seen = jsSpecifiers(text).map((s) => s.specifier);
  assert.deepEqual(seen.sort(), ["./a.js", "./b.mjs", "./c.js", "./d.js", "./e.js", "./f.cjs", "./g.js", "./h.js", "./i.js", "./j.js"]);
});

test("a circle is found and named, however long, and a tree has none", () => {
  const graph = new Map([
    ["a.js", [{ to: "b.js", line: 1 }]],
    ["b.js", [{ to: "c.js", line: 2 }, { to: "d.js", line: 3 }]],
    ["c.js", [{ to: "a.js", line: 4 }]],
    ["d.js", []],
  ]);
  const [circle, ...more] = circles(graph);
  assert.deepEqual(more, []);
  assert.deepEqual(circle.files, ["a.js", "b.js", "c.js", "a.js"]);
  assert.match(describeCircle(circle), /a\.js:1 → b\.js; b\.js:2 → c\.js; c\.js:4 → a\.js/);
  graph.set("c.js", []);
  assert.deepEqual(circles(graph), []);
});

test("the package's own name leads to its sources, by the condition of the importer's folder", () => {
  const self = packageSelfImport(JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")));
  assert.equal(self("captaindata-poller", "bin/run.mjs"), "js/node.js");
  assert.equal(self("captaindata-poller", "www/app.js"), "js/browser.js");
  assert.equal(self("#captaindata-poller", "worker/src/index.js"), "js/workerd.js");
  assert.equal(self("captaindata-poller/worker", "bench/push.mjs"), "worker/src/index.js");
  assert.equal(self("react", "js/react.js"), null);
});

test("no import circle among the crate's modules (src/)", () => {
  const graph = rustModuleGraph(root);
  assert.ok(graph.size > 30 && edgeCount(graph) > 80, `only ${graph.size} modules, ${edgeCount(graph)} edges: is the reader still reading src/?`);
  assert.ok(graph.get("src/engine/poller.rs").some((e) => e.to === "src/engine/config.rs"), "poller.rs's `use super::config::…` not seen");
  assert.ok(graph.get("src/wasm/options.rs").some((e) => e.to === "src/engine/config.rs"), "a re-export (crate::engine::Config) not followed");
  const found = circles(graph);
  assert.equal(found.length, 0, failure(found));
});

test(`no import circle among the JS files of ${JS_DIRS.join("/, ")}/`, () => {
  const files = JS_DIRS.flatMap(jsFiles);
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const graph = jsImportGraph(root, files, packageSelfImport(pkg));
  assert.ok(files.length > 100 && edgeCount(graph) > 150, `only ${files.length} files, ${edgeCount(graph)} imports: is the reader still reading them?`);
  assert.ok(graph.get("sim/v4.js").some((e) => e.to === "sim/v4-runs.js"), "sim/v4.js's imports not seen");
  const found = circles(graph);
  assert.equal(found.length, 0, failure(found));
});
