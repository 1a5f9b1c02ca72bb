// Who imports whom, file by file: the crate's modules (from `mod`, `use` and `crate::`/`super::`
// paths, re-exports followed to the file that defines the item) and the project's JS files (from
// TypeScript's parser: imports, `export … from`, `import()`, `require()`, `new URL(…,
// import.meta.url)` and the JSDoc `import("…")` types and `@import` tags), and the circles in
// such a graph. The graphs map a file (relative to the root) to its edges `{ to, line }`.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

// ---------------------------------------------------------------------------------------------
// Rust

/** Rust tokens without comments or whitespace: `{ kind: "ident" | "str" | "punct" | "other", value, line }`. */
export function rustTokens(text) {
  const tokens = [];
  let line = 1;
  let i = 0;
  const push = (kind, value, at = line) => tokens.push({ kind, value, line: at });
  const skipTo = (end) => {
    for (; i < end; i++) if (text[i] === "\n") line += 1;
  };
  while (i < text.length) {
    const c = text[i];
    const rest = text.slice(i, i + 3);
    if (c === "\n") {
      line += 1;
      i += 1;
    } else if (/\s/.test(c)) {
      i += 1;
    } else if (rest.startsWith("//")) {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end;
    } else if (rest.startsWith("/*")) {
      let depth = 0;
      let j = i;
      do {
        if (text.startsWith("/*", j)) (depth += 1), (j += 2);
        else if (text.startsWith("*/", j)) (depth -= 1), (j += 2);
        else j += 1;
      } while (depth > 0 && j < text.length);
      skipTo(j);
    } else if (/^(?:b|c)?r#*"/.test(text.slice(i, i + 40))) {
      // raw string: r"…", r#"…"#, br##"…"##
      const [open] = text.slice(i).match(/^(?:b|c)?r(#*)"/);
      const hashes = open.length - open.indexOf("r") - 2;
      const close = `"${"#".repeat(hashes)}`;
      const end = text.indexOf(close, i + open.length);
      const at = line;
      const value = text.slice(i + open.length, end);
      skipTo(end + close.length);
      push("str", value, at);
    } else if (c === '"' || ((c === "b" || c === "c") && text[i + 1] === '"')) {
      let j = text.indexOf('"', i) + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const at = line;
      const value = text.slice(text.indexOf('"', i) + 1, j);
      skipTo(j + 1);
      push("str", value, at);
    } else if (c === "'") {
      // a char literal ('a', '\n', '\u{1F600}', '"') or a lifetime ('a, 'static)
      const escaped = text[i + 1] === "\\";
      const width = escaped ? 0 : String.fromCodePoint(text.codePointAt(i + 1)).length;
      if (escaped) {
        const end = text.indexOf("'", i + 3);
        skipTo(end + 1);
        push("other", "char");
      } else if (text[i + 1 + width] === "'") {
        skipTo(i + 2 + width);
        push("other", "char");
      } else {
        const [name] = text.slice(i + 1).match(/^\w*/);
        i += 1 + name.length;
        push("other", `'${name}`);
      }
    } else if (/[A-Za-z_]/.test(c)) {
      const [word] = text.slice(i).match(/^(?:r#)?\w+/);
      i += word.length;
      push("ident", word.replace(/^r#/, ""));
    } else if (/[0-9]/.test(c)) {
      const [number] = text.slice(i).match(/^[0-9][\w]*/);
      i += number.length;
      push("other", number);
    } else if (rest.startsWith("::")) {
      i += 2;
      push("punct", "::");
    } else {
      i += 1;
      push("punct", c);
    }
  }
  return tokens;
}

/**
 * The leaves of the use tree at `tokens[at]` (after `use`), up to its `;`: `{ segments, name, glob }`
 * each, `use crate::a::{b, c::d as e, f::*, self}` giving crate::a::b (b), crate::a::c::d (e),
 * crate::a::f (glob), crate::a (a). Returns the leaves and the index after the `;`.
 */
export function useTree(tokens, at) {
  let i = at;
  const leaves = [];
  const tree = (prefix) => {
    const segments = [...prefix];
    if (tokens[i]?.value === "::") i += 1; // a 2015-style leading `::`
    for (;;) {
      const t = tokens[i];
      if (t?.value === "{") {
        i += 1;
        while (tokens[i] && tokens[i].value !== "}") {
          tree(segments);
          if (tokens[i]?.value === ",") i += 1;
        }
        i += 1;
        return;
      }
      if (t?.value === "*") {
        i += 1;
        leaves.push({ segments, name: null, glob: true });
        return;
      }
      if (t?.kind !== "ident") return;
      i += 1;
      if (t.value !== "self" || segments.length === 0) segments.push(t.value);
      if (tokens[i]?.value === "::") {
        i += 1;
        continue;
      }
      let name = t.value === "self" ? segments.at(-1) : t.value;
      if (tokens[i]?.value === "as") {
        name = tokens[i + 1]?.value;
        i += 2;
      }
      leaves.push({ segments, name, glob: false });
      return;
    }
  };
  tree([]);
  while (tokens[i] && tokens[i].value !== ";") i += 1;
  return { leaves, next: i + 1 };
}

/** True when the `use` at `tokens[at]` is `pub use` or `pub(…) use`. */
function isPublic(tokens, at) {
  let j = at - 1;
  if (tokens[j]?.value === ")") {
    while (j > 0 && tokens[j].value !== "(") j -= 1;
    j -= 1;
  }
  return tokens[j]?.value === "pub";
}

/**
 * One file's modules and references: `modules` (inline ones, keyed by their path under the
 * file's module, `[]` for the file's own), `declared` (`mod x;` with its `#[path]`), `uses` and
 * `paths` (each `{ module, segments, name, glob, public, line }`, `module` the inline path).
 */
export function rustFileItems(text) {
  const tokens = rustTokens(text);
  const declared = [];
  const uses = [];
  const inline = [[]];
  const stack = [{ path: [], depth: -1 }];
  let depth = 0;
  let pathAttr = null;
  for (let i = 0; i < tokens.length; ) {
    const t = tokens[i];
    const module = stack.at(-1).path;
    if (t.value === "#" && (tokens[i + 1]?.value === "[" || (tokens[i + 1]?.value === "!" && tokens[i + 2]?.value === "["))) {
      // an attribute: skipped whole (its paths are not imports), `#[path = "x.rs"]` kept
      let j = tokens[i + 1].value === "[" ? i + 2 : i + 3;
      if (tokens[j]?.value === "path" && tokens[j + 1]?.value === "=" && tokens[j + 2]?.kind === "str") pathAttr = tokens[j + 2].value;
      for (let open = 1; open > 0 && j < tokens.length; j++) open += tokens[j].value === "[" ? 1 : tokens[j].value === "]" ? -1 : 0;
      i = j;
      continue;
    }
    if (t.value === "mod" && tokens[i + 1]?.kind === "ident") {
      const name = tokens[i + 1].value;
      if (tokens[i + 2]?.value === ";") {
        declared.push({ module, name, pathAttr, line: t.line });
        pathAttr = null;
        i += 3;
        continue;
      }
      if (tokens[i + 2]?.value === "{") {
        const path = [...module, name];
        inline.push(path);
        stack.push({ path, depth });
        depth += 1;
        pathAttr = null;
        i += 3;
        continue;
      }
    }
    if (t.value === "use") {
      const { leaves, next } = useTree(tokens, i + 1);
      const pub = isPublic(tokens, i);
      for (const leaf of leaves) uses.push({ module, ...leaf, public: pub, line: t.line });
      i = next;
      continue;
    }
    if ((t.value === "crate" || t.value === "super" || t.value === "self") && tokens[i + 1]?.value === "::" && tokens[i - 1]?.value !== "$" && tokens[i - 1]?.value !== "::") {
      // a path in code: crate::engine::Config::new, super::super::x
      const segments = [t.value];
      let j = i + 1;
      while (tokens[j]?.value === "::" && tokens[j + 1]?.kind === "ident") {
        segments.push(tokens[j + 1].value);
        j += 2;
      }
      uses.push({ module, segments, name: null, glob: false, public: false, line: t.line });
      i = j;
      continue;
    }
    if (t.value === "{") depth += 1;
    if (t.value === "}") {
      depth -= 1;
      if (stack.length > 1 && stack.at(-1).depth === depth) stack.pop();
    }
    pathAttr = null;
    i += 1;
  }
  return { declared, uses, inline };
}

/**
 * The crate's module graph from `lib` (relative to `root`): file → `[{ to, line }]`. A `use` or a
 * path names the file that defines its item: a re-export (`pub use`) is followed to its source.
 * `mod x;` alone is no edge (a parent holds its children; it imports them by `use` or by a path).
 */
export function rustModuleGraph(root, lib = "src/lib.rs", read = (file) => readFileSync(path.join(root, file), "utf8")) {
  const exists = (file) => existsSync(path.join(root, file));
  const modules = new Map(); // "crate::engine::config" → { key, file, parent, children, reexports, globs }
  const files = [];
  const node = (key, file, parent) => {
    const m = { key, file, parent, children: new Map(), reexports: new Map(), globs: [] };
    modules.set(key, m);
    if (parent) parent.children.set(key.split("::").at(-1), m);
    return m;
  };
  // Load every file reachable by `mod` declarations, and their inline modules.
  const load = (file, key, parent) => {
    const items = rustFileItems(read(file));
    const own = node(key, file, parent);
    const at = (inlinePath) => inlinePath.reduce((m, name) => m.children.get(name), own);
    for (const inlinePath of items.inline.slice(1)) node([key, ...inlinePath].join("::"), file, at(inlinePath.slice(0, -1)));
    files.push({ file, key, items, own, at });
    const modRs = /(^|\/)(lib|main|mod)\.rs$/.test(file);
    for (const d of items.declared) {
      const dir = path.posix.join(path.posix.dirname(file), modRs ? "" : path.posix.basename(file, ".rs"), ...d.module);
      const candidates = d.pathAttr ? [path.posix.join(path.posix.dirname(file), d.pathAttr)] : [`${dir}/${d.name}.rs`, `${dir}/${d.name}/mod.rs`];
      const child = candidates.find(exists);
      if (child) load(child, [key, ...d.module, d.name].join("::"), at(d.module));
    }
  };
  load(lib, "crate", null);

  // A use's segments as an absolute module path, or null for another crate (alloc, serde, …).
  const absolute = (from, segments) => {
    let m = from;
    let i = 0;
    if (segments[0] === "crate") (m = modules.get("crate")), (i = 1);
    else if (segments[0] === "self") i = 1;
    else if (segments[0] === "super") for (; segments[i] === "super"; i++) m = m.parent;
    else if (!m.children.has(segments[0])) return null;
    return m ? [...m.key.split("::"), ...segments.slice(i)] : null;
  };
  for (const { items, at } of files) {
    for (const use of items.uses.filter((u) => u.public && u.segments.length > 0)) {
      const m = at(use.module);
      const target = absolute(m, use.segments);
      if (!target) continue;
      if (use.glob) m.globs.push(target);
      else if (use.name) m.reexports.set(use.name, target);
    }
  }
  // The file that defines what an absolute path names (following re-exports and glob re-exports).
  const resolve = (segments, hops = 0) => {
    if (hops > 32) return null;
    let m = modules.get("crate");
    for (const [i, seg] of segments.slice(1).entries()) {
      const rest = segments.slice(i + 2);
      if (m.children.has(seg)) {
        m = m.children.get(seg);
        continue;
      }
      if (m.reexports.has(seg)) return resolve([...m.reexports.get(seg), ...rest], hops + 1);
      for (const glob of m.globs) {
        const source = modules.get(glob.join("::"));
        if (source && (source.children.has(seg) || source.reexports.has(seg))) return resolve([...glob, seg, ...rest], hops + 1);
      }
      return m.file; // an item of m
    }
    return m.file;
  };
  const graph = new Map(files.map(({ file }) => [file, []]));
  for (const { file, items, at } of files) {
    for (const use of items.uses) {
      const target = absolute(at(use.module), use.segments);
      const to = target && resolve(target);
      if (to && to !== file) graph.get(file).push({ to, line: use.line });
    }
  }
  return graph;
}

// ---------------------------------------------------------------------------------------------
// JavaScript

/** Every module specifier of a JS file as written, with its line: static, dynamic, required, JSDoc types. */
export function jsSpecifiers(text, file = "x.js") {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const found = [];
  const add = (literal) => {
    if (literal && ts.isStringLiteralLike(literal)) {
      found.push({ specifier: literal.text, line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1 });
    }
  };
  const isImportMetaUrl = (n) => n && ts.isPropertyAccessExpression(n) && ts.isMetaProperty(n.expression) && n.name.text === "url";
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isJSDocImportTag(node)) add(node.moduleSpecifier);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === "require")) add(node.arguments[0]);
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "URL" && isImportMetaUrl(node.arguments?.[1])) {
      const [target] = node.arguments;
      if (ts.isStringLiteralLike(target) && /\.[cm]?js$/.test(target.text)) add(target);
    }
    for (const doc of node.jsDoc ?? []) visit(doc);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Where a specifier written in `from` leads, relative to the root, or null (a package, a built-in,
 * a missing file). `selfImport(specifier, from)` resolves the package's own name and `#imports`.
 */
export function resolveJs(root, from, specifier, selfImport = () => null) {
  const candidates = (abs) => [abs, `${abs}.js`, `${abs}.mjs`, path.join(abs, "index.js")];
  let bases;
  if (specifier.startsWith(".")) bases = [path.resolve(root, path.dirname(from), specifier)];
  else if (specifier.startsWith("/")) bases = [path.join(root, specifier), path.join(root, "www", specifier)]; // a served path
  else {
    const self = selfImport(specifier, from);
    bases = self ? [path.join(root, self)] : [];
  }
  for (const abs of bases.flatMap(candidates)) {
    if (existsSync(abs) && !abs.endsWith(path.sep) && path.extname(abs)) return path.relative(root, abs).split(path.sep).join("/");
  }
  return null;
}

/**
 * The package's own name and `#imports` as a file in the repository: the export map with the
 * condition of the folder the importer runs in (www/: the page's import map sends the package to
 * js/browser.js; worker/: workerd; else node), a built `dist/x.js` read as its source `js/x.js`.
 */
export function packageSelfImport(pkg) {
  const pick = (target, conditions) => {
    if (typeof target === "string" || target === null) return target;
    for (const [condition, value] of Object.entries(target)) if (conditions.includes(condition)) return pick(value, conditions);
    return null;
  };
  return (specifier, from) => {
    const conditions = [from.startsWith("www/") ? "browser" : from.startsWith("worker/") ? "workerd" : "node", "default"];
    const map = specifier.startsWith("#") ? pkg.imports ?? {} : pkg.exports ?? {};
    const key = specifier.startsWith("#") ? specifier : specifier === pkg.name ? "." : specifier.startsWith(`${pkg.name}/`) ? `.${specifier.slice(pkg.name.length)}` : null;
    const target = key && key in map ? pick(map[key], conditions) : null;
    return target ? target.replace(/^\.\//, "").replace(/^dist\//, "js/") : null;
  };
}

/** The import graph of `files` (relative to the root): file → `[{ to, line }]`, only edges among `files`. */
export function jsImportGraph(root, files, selfImport) {
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, []]));
  for (const file of files) {
    for (const { specifier, line } of jsSpecifiers(readFileSync(path.join(root, file), "utf8"), file)) {
      const to = resolveJs(root, file, specifier, selfImport);
      if (to && known.has(to) && to !== file) graph.get(file).push({ to, line });
    }
  }
  return graph;
}

// ---------------------------------------------------------------------------------------------
// Circles

/**
 * The circles of a graph (file → `[{ to, line }]`): one per strongly connected group of files,
 * as the files in import order back to the first, each `{ files, edges }` (edges: "a:12 → b").
 */
export function circles(graph) {
  // Tarjan's strongly connected components.
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  const strongConnect = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        strongConnect(to);
        low.set(v, Math.min(low.get(v), low.get(to)));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v), index.get(to)));
    }
    if (low.get(v) === index.get(v)) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(new Set(group));
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) strongConnect(v);
  // In each group, the shortest way from its first file back to itself (breadth first).
  return groups.map((group) => {
    const start = [...group].sort()[0];
    const came = new Map([[start, null]]);
    const queue = [start];
    let last = null;
    while (queue.length > 0 && last === null) {
      const v = queue.shift();
      for (const edge of graph.get(v)) {
        if (!group.has(edge.to)) continue;
        if (edge.to === start) {
          last = { from: v, edge };
          break;
        }
        if (!came.has(edge.to)) {
          came.set(edge.to, { from: v, edge });
          queue.push(edge.to);
        }
      }
    }
    const steps = [last];
    for (let s = came.get(last.from); s; s = came.get(s.from)) steps.unshift(s);
    return {
      files: [start, ...steps.map((s) => s.edge.to)],
      edges: steps.map((s) => `${s.from}:${s.edge.line} → ${s.edge.to}`),
      group: [...group].sort(),
    };
  });
}

/** A circle as a failure message's lines. */
export const describeCircle = (c) =>
  `${c.files.join(" → ")}\n    (${c.edges.join("; ")})${c.group.length > c.files.length - 1 ? `\n    all files of this tangle: ${c.group.join(", ")}` : ""}`;
