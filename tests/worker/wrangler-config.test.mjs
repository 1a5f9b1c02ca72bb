// The Miniflare options the tests run with describe the same worker as wrangler.toml, and the
// worker's code imports the package the way a user's worker does: by its name.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import { miniflareOptions } from "../../worker/miniflare-options.mjs";

const toml = readFileSync(new URL("../../worker/wrangler.toml", import.meta.url), "utf8");
const values = (key) => [...toml.matchAll(new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, "gm"))].map((m) => m[1]);

test("wrangler.toml and the Miniflare options agree on entry, date, Durable Objects and cron", async () => {
  const options = await miniflareOptions({ baseUrl: "http://127.0.0.1:1/v3" });
  assert.deepEqual(values("main"), ["src/index.js"]);
  assert.deepEqual(options.modules.map((m) => m.type), ["ESModule", "CompiledWasm"], "one bundle and its wasm, as wrangler deploys it");
  assert.deepEqual(values("compatibility_date"), [options.compatibilityDate]);
  const bindings = values("name").slice(1); // the first `name` is the worker's
  assert.deepEqual(bindings, Object.keys(options.durableObjects));
  assert.deepEqual(values("class_name"), Object.values(options.durableObjects).map((d) => d.className));
  assert.match(toml, /new_sqlite_classes = \["RunTracker", "Registry"\]/);
  assert.ok(Object.values(options.durableObjects).every((d) => d.useSQLite));
  assert.match(toml, /crons = \["[^"]+"\]/);
  assert.match(toml, /type = "CompiledWasm"/);
});

test("no secret has a value in wrangler.toml", () => {
  for (const name of ["CAPTAINDATA_API_KEY", "CAPTAINDATA_PROJECT_ID", "WEBHOOK_SECRET", "READ_TOKEN_SECRET", "ADMIN_TOKEN"]) {
    assert.doesNotMatch(toml, new RegExp(`^${name}\\s*=`, "m"), name);
  }
});

test("worker/src imports the package by its name only: no path into js/, dist/ or pkg/", () => {
  const dir = new URL("../../worker/src/", import.meta.url);
  const imports = readdirSync(dir)
    .filter((f) => f.endsWith(".js"))
    .flatMap((f) => [...readFileSync(new URL(f, dir), "utf8").matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]));
  const outside = imports.filter((spec) => !spec.startsWith("./") && spec !== "captaindata-poller" && spec !== "cloudflare:workers");
  assert.deepEqual(outside, []);
  assert.ok(imports.includes("captaindata-poller"));
});
