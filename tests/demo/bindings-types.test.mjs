// The React, Vue and Svelte bindings' types as a user gets them (through package.json `exports`):
// generic rows in the hooks' and the store's state, read-only state, the six statuses.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { root } from "../../scripts/exec.mjs";

test("tsc accepts tests/bindings/types/usage.ts and its @ts-expect-error lines stay errors", () => {
  const tsc = path.join(root, "node_modules", ".bin", "tsc");
  const out = spawnSync(tsc, ["--noEmit", "-p", path.join("tests", "bindings", "types")], { cwd: root, encoding: "utf8" });
  assert.equal(out.status, 0, out.stdout + out.stderr);
});
