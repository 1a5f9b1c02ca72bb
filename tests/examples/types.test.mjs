// Every README example type-checked under `strict`, with the tool a user's project would use:
// tsc (TS, TSX and JS with checkJs; the page's module script; the Worker with the Workers
// types), vue-tsc for the Vue component, svelte-check for the Svelte 5 one (warnings fail too);
// and with no cast and no non-null assertion, read from each example's syntax tree.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parse as parseSvelte } from "svelte/compiler";
import ts from "typescript";
import { parse as parseVue } from "vue/compiler-sfc";
import { exampleFiles } from "../../scripts/examples.mjs";
import { root } from "../../scripts/exec.mjs";

const bin = (name) => path.join(root, "node_modules", ".bin", name);

/** Runs a checker; resolves with its exit code and output. */
function check(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** The module script of examples/page/index.html, where tsc reads it (test-results/examples/page.js). */
function extractPageScript() {
  const html = readFileSync(path.join(root, "examples", "page", "index.html"), "utf8");
  const scripts = [...html.matchAll(/<script type="module">\n([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  assert.equal(scripts.length, 1, "the page has one module script");
  const dir = path.join(root, "test-results", "examples");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "page.js"), `// From examples/page/index.html (tests/examples/types.test.mjs writes it).\n${scripts[0].replace(/^ {2}/gm, "")}`);
}

test("tsc --strict: the Node, React, TypeScript and page examples", async () => {
  extractPageScript();
  const { code, output } = await check(bin("tsc"), ["--noEmit", "-p", "tests/examples"]);
  assert.equal(code, 0, output);
  const { code: listed, output: files } = await check(bin("tsc"), ["--noEmit", "--listFilesOnly", "-p", "tests/examples"]);
  assert.equal(listed, 0, files);
  for (const file of ["examples/node/watch.js", "examples/react/Leads.tsx", "examples/node/typed-rows.ts", "test-results/examples/page.js"]) {
    assert.ok(files.includes(path.join(root, file)), `${file} is checked`);
  }
});

test("tsc --strict with the Workers types: the Worker examples", async () => {
  const { code, output } = await check(bin("tsc"), ["--noEmit", "-p", "tests/examples/tsconfig.worker.json"]);
  assert.equal(code, 0, output);
});

test("vue-tsc --strict (strictTemplates): the Vue example", async () => {
  const { code, output } = await check(bin("vue-tsc"), ["--noEmit", "-p", "tests/examples/tsconfig.vue.json"]);
  assert.equal(code, 0, output);
});

test("svelte-check --fail-on-warnings: the Svelte 5 example (no state_referenced_locally)", async () => {
  const { code, output } = await check(bin("svelte-check"), ["--tsconfig", "tests/examples/tsconfig.svelte.json", "--fail-on-warnings", "--output", "machine"]);
  assert.equal(code, 0, output);
  assert.match(output, /COMPLETED \d+ FILES 0 ERRORS 0 WARNINGS/);
  assert.doesNotMatch(output, /COMPLETED 0 FILES/, "the example was checked");
});

test("bash -n: the shell examples parse", async () => {
  for (const file of ["examples/cli/watch.sh", "examples/cli/simulator.sh"]) {
    const { code, output } = await check("bash", ["-n", file]);
    assert.equal(code, 0, `${file}: ${output}`);
  }
});

// "Compiles under strict with no cast and no `!`": a cast or a non-null assertion would hide from
// the type-checks above exactly what they are there to catch (a union that does not narrow, an
// error that may be null). Read from each file's syntax tree, never by matching text: `!==`, `!x`,
// "as" in a string, `useJobPoller<Lead>(…)` are not casts. `as const` and `satisfies` claim
// nothing the checker does not verify, so they are allowed.

/** A finding: `{ line, what }`. */
const finding = (line, what) => ({ line, what });

/** Casts and non-null assertions in TS or JS `source` (JS: JSDoc casts `/** @type {X} *\/ (x)`); lines from `firstLine`. */
function tsCasts(source, { kind = ts.ScriptKind.TS, firstLine = 1 } = {}) {
  const name = { [ts.ScriptKind.TS]: "x.ts", [ts.ScriptKind.TSX]: "x.tsx", [ts.ScriptKind.JS]: "x.js" }[kind];
  const file = ts.createSourceFile(name, source, ts.ScriptTarget.Latest, true, kind);
  if (file.parseDiagnostics.length > 0) throw new Error(`does not parse: ${ts.flattenDiagnosticMessageText(file.parseDiagnostics[0].messageText, " ")}`);
  const found = [];
  const at = (node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line + firstLine;
  const visit = (node) => {
    if (ts.isAsExpression(node) && !(ts.isTypeReferenceNode(node.type) && node.type.getText(file) === "const")) {
      found.push(finding(at(node), `a cast: ${node.getText(file)}`));
    } else if (ts.isTypeAssertionExpression(node)) {
      found.push(finding(at(node), `a cast: ${node.getText(file)}`));
    } else if (ts.isNonNullExpression(node)) {
      found.push(finding(at(node), `a non-null assertion: ${node.getText(file)}`));
    } else if ((ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) && node.exclamationToken) {
      found.push(finding(at(node), `a definite assignment assertion: ${node.getText(file)}`));
    } else if (kind === ts.ScriptKind.JS && ts.isParenthesizedExpression(node) && ts.getJSDocTypeTag(node)) {
      found.push(finding(at(node), `a JSDoc cast to ${ts.getJSDocTypeTag(node).typeExpression.type.getText(file)}: ${node.getText(file)}`));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The same in a Svelte component: its scripts and its markup, from Svelte's own parser. */
function svelteCasts(source) {
  const lineOf = (offset) => source.slice(0, offset).split("\n").length;
  const found = [];
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== "object") return;
    const asConst = node.type === "TSAsExpression" && node.typeAnnotation?.type === "TSTypeReference" && node.typeAnnotation.typeName?.name === "const";
    if ((node.type === "TSAsExpression" && !asConst) || node.type === "TSTypeAssertion") found.push(finding(lineOf(node.start), `a cast: ${source.slice(node.start, node.end)}`));
    if (node.type === "TSNonNullExpression") found.push(finding(lineOf(node.start), `a non-null assertion: ${source.slice(node.start, node.end)}`));
    if (node.type === "VariableDeclarator" && node.definite) found.push(finding(lineOf(node.start), `a definite assignment assertion: ${source.slice(node.start, node.end)}`));
    for (const [key, value] of Object.entries(node)) if (key !== "parent") visit(value);
  };
  visit(parseSvelte(source, { modern: true }));
  return found.sort((a, b) => a.line - b.line); // the tree holds the markup before the script
}

/** The same in a Vue component: its `<script>` blocks and every expression of its template. */
function vueCasts(source) {
  const { descriptor, errors } = parseVue(source);
  if (errors.length > 0) throw new Error(`does not parse: ${errors[0].message ?? errors[0]}`);
  const found = [];
  for (const block of [descriptor.script, descriptor.scriptSetup]) {
    if (block) found.push(...tsCasts(block.content, { kind: block.lang === "tsx" ? ts.ScriptKind.TSX : ts.ScriptKind.TS, firstLine: block.loc.start.line }));
  }
  /** One template expression; `v-for`'s source is the part after `in`/`of`, `v-on` may hold statements. */
  const expression = (text, line, directive) => {
    const source = directive === "for" ? text.replace(/^[\s\S]*?\s(?:in|of)\s/, "") : text;
    const asStatements = directive === "on" ? `${source}\n;` : `(${source}\n);`;
    found.push(...tsCasts(asStatements, { firstLine: line }));
  };
  const visit = (node) => {
    if (node.type === 5) expression(node.content.content, node.content.loc.start.line); // {{ … }}
    for (const prop of node.props ?? []) {
      if (prop.type === 7 && prop.exp) expression(prop.exp.content, prop.exp.loc.start.line, prop.name); // v-…, :…, @…
    }
    for (const child of node.children ?? []) visit(child);
  };
  if (descriptor.template?.ast) visit(descriptor.template.ast);
  return found;
}

/** Casts and non-null assertions in the example `file` (a path from the root), by its kind. */
function castsIn(file, source = readFileSync(path.join(root, file), "utf8")) {
  const ext = path.extname(file);
  if (ext === ".ts") return tsCasts(source);
  if (ext === ".tsx") return tsCasts(source, { kind: ts.ScriptKind.TSX });
  if (ext === ".js" || ext === ".mjs") return tsCasts(source, { kind: ts.ScriptKind.JS });
  if (ext === ".vue") return vueCasts(source);
  if (ext === ".svelte") return svelteCasts(source);
  if (ext === ".html") {
    // The page's module scripts, at their lines in the page.
    return [...source.matchAll(/<script type="module">\n([\s\S]*?)<\/script>/g)].flatMap((m) =>
      tsCasts(m[1], { kind: ts.ScriptKind.JS, firstLine: source.slice(0, m.index).split("\n").length + 1 }),
    );
  }
  return null; // not code a type-checker reads (shell, TOML, …)
}

test("no example casts or asserts non-null: TS, TSX, Vue (scripts and template), Svelte (script and markup), and JSDoc casts in JS", () => {
  const checked = [];
  const found = [];
  for (const file of exampleFiles()) {
    const casts = castsIn(file);
    if (casts === null) continue;
    checked.push(file.split(path.sep).join("/"));
    found.push(...casts.map(({ line, what }) => `${file}:${line}: ${what}`));
  }
  assert.deepEqual(found, []);
  for (const file of ["examples/node/typed-rows.ts", "examples/react/Leads.tsx", "examples/vue/Leads.vue", "examples/svelte/Leads.svelte", "examples/page/index.html"]) {
    assert.ok(checked.includes(file), `${file} is checked`);
  }
});

test("the cast check sees each kind of cast and `!`, where it is, and nothing else", () => {
  const whats = (found) => found.map(({ line, what }) => `${line}: ${what}`);
  const ts1 = [
    'const a = value as string;',
    "const b = <string>value;",
    "const c = maybe!.length;",
    "let d!: number;",
    'const ok = maybe !== null && !flag ? "as it was" : [1] as const; // x as y, y!',
    "const e = useJobPoller<Lead>(options) satisfies unknown;",
  ].join("\n");
  assert.deepEqual(whats(castsIn("x.ts", ts1)), ["1: a cast: value as string", "2: a cast: <string>value", "3: a non-null assertion: maybe!", "4: a definite assignment assertion: d!: number"]);
  // In TSX `<X>expr` is an element, not a cast; `as` still is.
  assert.deepEqual(whats(castsIn("x.tsx", "const a = <p>{(x as Row).id}</p>;\nconst b = <p>{x!.id}</p>;")), ["1: a cast: x as Row", "2: a non-null assertion: x!"]);
  assert.deepEqual(whats(castsIn("x.js", "/** @type {string} */\nconst fine = f();\nconst cast = /** @type {string} */ (f());")), ["3: a JSDoc cast to string: (f())"]);
  const vue = [
    '<script setup lang="ts">',
    "const p = defineProps<{ id: string | null }>();",
    "const id = p.id!;",
    "</script>",
    "<template>",
    '  <p v-if="p.id !== null">{{ (p.id as string).length }}</p>',
    '  <li v-for="row in rows!" :key="row.id" @click="pick(row); last = row!">{{ row.name }}</li>',
    "</template>",
  ].join("\n");
  assert.deepEqual(whats(castsIn("x.vue", vue)), ["3: a non-null assertion: p.id!", "6: a cast: p.id as string", "7: a non-null assertion: rows!", "7: a non-null assertion: row!"]);
  const svelte = [
    '<script lang="ts">',
    "  let { id }: { id: string | null } = $props();",
    "  const n = (id as string).length;",
    "</script>",
    "{#if id !== null}<p>{id!.length}</p>{/if}",
  ].join("\n");
  assert.deepEqual(whats(castsIn("x.svelte", svelte)), ["3: a cast: id as string", "5: a non-null assertion: id!"]);
  assert.deepEqual(whats(castsIn("x.html", '<p>a</p>\n<script type="module">\n  const el = /** @type {HTMLElement} */ (document.querySelector("p"));\n</script>\n')), [
    '3: a JSDoc cast to HTMLElement: (document.querySelector("p"))',
  ]);
  assert.equal(castsIn("x.sh", "echo 'x as y'"), null);
});
