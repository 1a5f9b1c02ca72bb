// The pure parts of the worker's v4 support, without workerd: what the safety net replays, and
// which settings it accepts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { reconcile } from "../../worker/src/v4-reconcile.js";
import { v4Callback, v4Settings } from "../../worker/src/v4-settings.js";

const d = (uid, batch, status, parent = null) => ({ uid, batch_uid: batch, status, parent_uid: parent });

test("reconcile: stored batches need nothing; a failed or never-stored one is replayed, up to 3 times; in flight waits", () => {
  const deliveries = [
    d("d1", "b1", "SUCCESS"),
    d("d2", "b2", "FAILED"),
    d("d3", "b3", "SUCCESS"), // says SUCCESS, but the worker never stored b3
    d("d4", "b4", "PENDING"),
    d("d5", "b5", "FAILED"),
    d("r1", "b5", "FAILED", "d5"),
    d("r2", "b5", "FAILED", "d5"),
    d("r3", "b5", "FAILED", "d5"),
    d("d6", "b6", "FAILED"),
    d("r4", "b6", "RUNNING", "d6"),
  ];
  const plan = reconcile(deliveries, new Set(["b1"]));
  assert.deepEqual(plan.replay, ["d2", "d3"]);
  assert.deepEqual(plan.waiting.sort(), ["b2", "b3", "b4", "b6"]);
  assert.deepEqual(plan.lost, ["b5"], "3 replays failed: lost, and named");
  assert.deepEqual(reconcile(deliveries, new Set(["b1", "b2", "b3", "b4", "b5", "b6"])), { replay: [], waiting: [], lost: [] });
  assert.deepEqual(reconcile([{ uid: "x" }], new Set()), { replay: [], waiting: [], lost: [] }, "a delivery without a batch_uid names nothing");
});

test("reconcile: the worker's own count of replays holds when the list shows none (failed replay requests included)", () => {
  const deliveries = [d("d1", "b1", "FAILED"), d("d2", "b2", "FAILED")];
  const counted = (batch) => ({ b1: 3, b2: 1 })[batch] ?? 0;
  const plan = reconcile(deliveries, new Set(), () => true, counted);
  assert.deepEqual(plan, { replay: ["d2"], waiting: ["b2"], lost: ["b1"] });
});

test("v4 settings: defaults, https (http on loopback only), PUBLIC_URL needed to launch; a wrong one is named", () => {
  const env = { CAPTAINDATA_API_KEY: "k", WEBHOOK_SECRET: "s" };
  assert.deepEqual(v4Settings(env), { baseUrl: "https://api.captaindata.com/v4", apiKey: "k", statusIntervalMs: 60000, recheckMs: 5000, giveUpMs: 3_600_000 });
  assert.equal(v4Settings({ ...env, CAPTAINDATA_V4_API_KEY: "k4" }).apiKey, "k4");
  assert.equal(v4Settings({ ...env, CAPTAINDATA_V4_BASE_URL: "http://127.0.0.1:9/v4/" }).baseUrl, "http://127.0.0.1:9/v4");
  assert.throws(() => v4Settings({ ...env, CAPTAINDATA_V4_BASE_URL: "http://api.example.com/v4" }), { setting: "CAPTAINDATA_V4_BASE_URL" });
  assert.throws(() => v4Settings({ ...env, V4_STATUS_INTERVAL_MS: "soon" }), { setting: "V4_STATUS_INTERVAL_MS" });
  assert.throws(() => v4Settings({ WEBHOOK_SECRET: "s" }), { setting: "CAPTAINDATA_API_KEY" });
  assert.throws(() => v4Callback(env), { setting: "PUBLIC_URL", message: /PUBLIC_URL/ });
  assert.throws(() => v4Callback({ ...env, PUBLIC_URL: "http://worker.example.com" }), { setting: "PUBLIC_URL" });
  const callback = v4Callback({ ...env, PUBLIC_URL: "https://w.example.workers.dev/" }, "the-run-own-secret");
  assert.deepEqual(callback, { url: "https://w.example.workers.dev/v4/callbacks", headers: { "x-callback-secret": "the-run-own-secret" } });
  // A wrong value is never echoed (it could hold credentials).
  assert.throws(() => v4Callback({ ...env, PUBLIC_URL: "ftp://user:pw@x" }), (e) => !e.message.includes("pw"));
});

test("v4 problems for GET /health: only the v4 settings that are set and wrong, named without their value", async () => {
  const { v4Problems } = await import("../../worker/src/v4-settings.js");
  assert.deepEqual(v4Problems({}), [], "nothing set: nothing wrong (v4 is optional)");
  assert.deepEqual(v4Problems({ PUBLIC_URL: "https://w.example.workers.dev", CAPTAINDATA_V4_BASE_URL: "https://api.captaindata.com/v4" }), []);
  const wrong = v4Problems({ PUBLIC_URL: "http://w.example.com", V4_RECHECK_MS: "-1", CAPTAINDATA_V4_BASE_URL: "nope" });
  assert.deepEqual(wrong.map((p) => p.setting).sort(), ["CAPTAINDATA_V4_BASE_URL", "PUBLIC_URL", "V4_RECHECK_MS"]);
  assert.ok(wrong.every((p) => !p.message.includes("w.example.com") && !p.message.includes("nope")));
});

test("reconcile: a batch whose next replay is not due yet waits, without a replay", () => {
  const deliveries = [d("d1", "b1", "FAILED"), d("r1", "b1", "FAILED", "d1"), d("d2", "b2", "FAILED")];
  const asked = [];
  const plan = reconcile(deliveries, new Set(), (batch, replays) => {
    asked.push([batch, replays]);
    return replays === 0;
  });
  assert.deepEqual(asked, [["b1", 1], ["b2", 0]]);
  assert.deepEqual(plan, { replay: ["d2"], waiting: ["b1", "b2"], lost: [] });
});

test("the worker README and wrangler.toml say what holds for v4: the secrets, the safety net's bounds, ROWS_MISSING", async () => {
  const { readFileSync } = await import("node:fs");
  const readme = readFileSync(new URL("../../worker/README.md", import.meta.url), "utf8");
  const toml = readFileSync(new URL("../../worker/wrangler.toml", import.meta.url), "utf8");
  const env = { CAPTAINDATA_API_KEY: "k" };
  const { giveUpMs, recheckMs, statusIntervalMs } = v4Settings(env);
  for (const [name, value] of [["V4_GIVE_UP_MS", giveUpMs], ["V4_RECHECK_MS", recheckMs], ["V4_STATUS_INTERVAL_MS", statusIntervalMs]]) {
    assert.ok(readme.includes(`| \`${name}\` | \`${value}\` |`), `${name} in the README's table with its default`);
    assert.match(toml, new RegExp(`^${name} = "${value}"$`, "m"), `${name} in wrangler.toml`);
  }
  assert.ok(!readme.includes("x-callback-secret: <WEBHOOK_SECRET>"), "WEBHOOK_SECRET no longer opens the v4 callbacks");
  assert.ok(!readme.includes("never skipped in"), "a lost batch is not only named: the run is ROWS_MISSING");
  assert.ok(readme.includes("a delivery listed `FAILED` whose batch the worker has stored is\n  not replayed"), "which failed deliveries are not replayed, and why (issue 37, point 5)");
  for (const promise of ["callback secret of its own", "counted by the worker", "`SUBREQUEST_BUDGET` requests per alarm", "One round per `V4_RECHECK_MS`", '"error_code": "ROWS_MISSING"', "rows_missing", "BATCH_CONFLICT"]) {
    assert.ok(readme.includes(promise), promise);
  }
});
