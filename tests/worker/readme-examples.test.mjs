// worker/README.md's examples are files under examples/worker/, written into the markdown between
// markers: one text, never two. (The tests that run each file: package-deploy.test.mjs for the
// worker, its config, the deploy lines and .dev.vars.example; read-tokens.test.mjs for track.js.)
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const readme = readFileSync(path.join(root, "worker", "README.md"), "utf8");
const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n```\w*\n([\s\S]*?)```\n<!-- \/example -->/g)].map((m) => ({ file: m[1], text: m[2] }));

/** Every file under examples/worker, as a path from the repository's root. */
function filesUnder(dir) {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}

test("each marked block of worker/README.md is its example file, exactly", () => {
  assert.ok(blocks.length >= 5, `${blocks.length} marked blocks`);
  for (const { file, text } of blocks) assert.equal(text, readFileSync(path.join(root, file), "utf8"), file);
});

test("every file of examples/worker is shown in worker/README.md", () => {
  const shown = new Set(blocks.map((b) => b.file));
  assert.deepEqual(filesUnder(path.join("examples", "worker")).filter((f) => !shown.has(f)), []);
});
