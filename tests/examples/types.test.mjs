// Every README example type-checked under `strict`, with the tool a user's project would use:
// tsc (TS, TSX and JS with checkJs; the page's module script; the Worker with the Workers
// types), vue-tsc for the Vue component, svelte-check for the Svelte 5 one (warnings fail too).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
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
