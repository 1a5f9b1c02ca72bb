// Every rule written once: the crate's error codes, status classes, default settings and error
// texts (printed by scripts/rules.rs) are js/rules.js word for word, and every other place that
// needs one of them gives the crate's value — those that import it (the CLI, the worker, the tab
// layer, the demo, the probe: checked through what they do or return) and those that cannot (the
// `@default` tags of the .d.ts files, wrangler.toml, the demo page's HTML). A rule copied as a
// literal into a consumer also fails here.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { before, test } from "node:test";
import { RULES_FILE, crateRules, rulesModule } from "../scripts/rules.mjs";
import { root } from "../scripts/exec.mjs";

const read = (file) => readFileSync(path.join(root, file), "utf8");

/** What the crate says (a native build of scripts/rules.rs), read once. */
let crate;
before(async () => {
  crate = await crateRules();
});

const statuses = () => Object.keys(crate.v3.statuses);
const isOver = (status) => ["succeeded", "failed"].includes(crate.v3.statuses[status] ?? crate.v3.otherwise);

test("js/rules.js is what the crate prints (node scripts/rules.mjs writes it again)", () => {
  assert.equal(read(RULES_FILE), rulesModule(crate), `${RULES_FILE} is stale: run node scripts/rules.mjs`);
});

test("the package's error code lists and its ABORTED text are the crate's", async () => {
  const codes = await import("../js/error-codes.js");
  assert.deepEqual([...codes.ERROR_CODES], crate.errorCodes);
  assert.deepEqual([...codes.FINAL_ERROR_CODES], crate.finalErrorCodes);
  const { ABORTED_TEXT } = await import("../js/errors.js");
  assert.equal(ABORTED_TEXT, crate.messages.ABORTED);
});

test("the tab layer words TIMEOUT, BUDGET_EXHAUSTED and CALLBACK_FAILED as the engine does", async () => {
  const { callbackFailed, limitError } = await import("../js/tab-errors.js");
  const fill = (code, values) => crate.messages[code].replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
  assert.equal(limitError("TIMEOUT", { maxDurationMs: 1234 }).message, fill("TIMEOUT", { maxDurationMs: 1234 }));
  assert.equal(limitError("BUDGET_EXHAUSTED", { maxRequests: 7 }).message, fill("BUDGET_EXHAUSTED", { maxRequests: 7 }));
  assert.equal(callbackFailed(10, 25, null).message, fill("CALLBACK_FAILED", { from: 10, to: 25 }));
});

test("the CLI's --exit-status and --help follow the crate's classes and default base URL", async () => {
  const { exitCodeOfRun } = await import("../bin/status.mjs");
  const { EXIT } = await import("../bin/exit-codes.mjs");
  const byClass = { succeeded: EXIT.OK, failed: EXIT.RUN_FAILED, active: EXIT.NOT_ENDED, paused: EXIT.NOT_ENDED };
  for (const status of [...statuses(), "archived"]) {
    const runClass = crate.v3.statuses[status] ?? crate.v3.otherwise;
    for (const spelled of [status, status.toUpperCase()]) assert.equal(exitCodeOfRun({ status: spelled, errorMessage: null }), byClass[runClass], spelled);
  }
  const message = `Job error: ${crate.allInputsFailedText.toUpperCase()}.`;
  assert.equal(exitCodeOfRun({ status: "running", errorMessage: message }), EXIT.RUN_FAILED);
  const { HELP } = await import("../bin/help.mjs");
  assert.match(Object.values(HELP).join("\n"), new RegExp(`Default ${crate.defaults.poller.baseUrl.replaceAll(".", "\\.")}\\b`));
});

test("the worker's defaults and its terminal statuses are the crate's", async () => {
  const { settings } = await import("../worker/src/config.js");
  const s = settings({});
  const { poller, step } = crate.defaults;
  assert.deepEqual([s.baseUrl, s.stepRequests, s.stepDeadlineMs], [poller.baseUrl, step.maxRequests, step.deadlineMs]);
  // A run not yet stored to its end is never shown with a terminal status.
  const { runBody } = await import("../worker/src/v3-shapes.js");
  for (const status of [...statuses(), "archived"]) {
    const shown = runBody({ job_uid: "j", status, done: 0, row_count: 0 }).status;
    assert.equal(shown, isOver(status) ? "running" : status, status);
  }
  // A run that ended with ALL_INPUTS_FAILED says the crate's words, so a reader's poller ends the same way.
  const { error_message } = runBody({ job_uid: "j", status: "shutdown", done: 1, error_code: "ALL_INPUTS_FAILED", row_count: 0 });
  assert.equal(error_message.toLowerCase(), crate.allInputsFailedText);
});

test("wrangler.toml's [vars] say the package's defaults", () => {
  const vars = Object.fromEntries([...read("worker/wrangler.toml").matchAll(/^([A-Z_0-9]+) = "(.*)"$/gm)].map((m) => [m[1], m[2]]));
  const { poller, step } = crate.defaults;
  assert.deepEqual(
    [vars.CAPTAINDATA_BASE_URL, vars.SUBREQUEST_BUDGET, vars.STEP_DEADLINE_MS],
    [poller.baseUrl, String(step.maxRequests), String(step.deadlineMs)],
  );
});

test("the probe and the demo page use the crate's base URL and hidden interval", async () => {
  const { probeConfig } = await import("../scripts/probe.mjs");
  assert.equal(probeConfig([], { CAPTAINDATA_API_KEY: "k", CAPTAINDATA_PROJECT_ID: "p", CAPTAINDATA_JOB_UID: "j" }).baseUrl, crate.defaults.poller.baseUrl);
  const html = read("www/index.html");
  assert.equal(html.match(/name="baseUrl"[^>]*placeholder="([^"]+)"/)?.[1], crate.defaults.poller.baseUrl);
  const rulesUrl = JSON.parse(html.match(/<script type="importmap">(.*?)<\/script>/s)[1]).imports["captaindata-poller/rules"];
  assert.equal(rulesUrl, "/js/rules.js", "the demo page maps captaindata-poller/rules to the generated module");
  assert.match(read("www/app.js"), /HIDDEN_INTERVAL_MS = DEFAULTS\.hiddenIntervalMs;/);
  assert.match(read("www/settings.js"), /DEFAULT_BASE_URL = DEFAULTS\.baseUrl;/);
});

/** `Interface.property` → the `@default` tag's first word, for every tag of a .d.ts file. */
function defaultTags(file) {
  const tags = new Map();
  let scope = null;
  let doc = "";
  for (const line of read(file).split("\n")) {
    scope = line.match(/^export (?:declare )?(?:interface|type|function) (\w+)/)?.[1] ?? scope;
    if (/^\s*\/\*\*/.test(line)) doc = "";
    doc += `${line}\n`;
    const prop = line.match(/^\s+(?:readonly )?(\w+)\??:/);
    const tag = doc.match(/@default\s+("[^"]*"|\S+)/);
    if (prop && tag) tags.set(`${file}: ${scope}.${prop[1]}`, tag[1]);
    if (prop) doc = "";
  }
  return tags;
}

/** How a crate value reads in a `@default` tag (`null`: no limit). */
const tagOf = (value) => (value === null ? "unlimited" : typeof value === "string" ? JSON.stringify(value) : String(value));

// Tags that are not the crate's: the runtime's or the bindings' own defaults.
const NOT_THE_CRATES = new Set([
  "index.d.ts: Connection.fetch",
  "index.d.ts: JobPollerOptions.seed",
  "index.d.ts: JobPollerOptions.onCallbackError",
  "index.d.ts: JobPollerOptions.shareAcrossTabs",
  "index.d.ts: JobPollerOptions.shareKey",
  "index.d.ts: JobPollerOptions.transport",
  "index.d.ts: JobPollerOptions.WebSocket",
  "bindings.d.ts: BindingOptions.keepRows",
]);

test("every @default tag of the .d.ts files is the crate's value (or listed as not the crate's)", () => {
  const { poller, step } = crate.defaults;
  const expected = {
    "index.d.ts: RetryOptions.retries": poller.retry.retries,
    "index.d.ts: RetryOptions.minDelayMs": poller.retry.minDelayMs,
    "index.d.ts: RetryOptions.maxDelayMs": poller.retry.maxDelayMs,
    "index.d.ts: Connection.baseUrl": poller.baseUrl,
    "index.d.ts: Connection.timeoutMs": poller.timeoutMs,
    "index.d.ts: JobPollerOptions.intervalMs": poller.intervalMs,
    "index.d.ts: JobPollerOptions.hiddenIntervalMs": poller.hiddenIntervalMs,
    "index.d.ts: JobPollerOptions.readMode": poller.readMode,
    "index.d.ts: JobPollerOptions.statusEvery": poller.statusEvery,
    "index.d.ts: JobPollerOptions.maxDurationMs": poller.maxDurationMs,
    "index.d.ts: JobPollerOptions.maxRequests": poller.maxRequests,
    "index.d.ts: PollStepOptions.maxRequests": step.maxRequests,
    "index.d.ts: PollStepOptions.deadlineMs": step.deadlineMs,
    "index.d.ts: PollStepOptions.readMode": step.readMode,
  };
  const files = readdirSync(root).filter((f) => f.endsWith(".d.ts"));
  const tags = new Map(files.flatMap((file) => [...defaultTags(file)]));
  for (const [where, value] of Object.entries(expected)) assert.equal(tags.get(where), tagOf(value), where);
  const unknown = [...tags.keys()].filter((where) => !(where in expected) && !NOT_THE_CRATES.has(where));
  assert.deepEqual(unknown, [], "a @default tag this test does not check against the crate");
});

// The files that read the rules instead of copying them.
const CONSUMERS = [
  ...["bin", "worker/src", "www"].flatMap((dir) => readdirSync(path.join(root, dir)).filter((f) => /\.(m?js|html)$/.test(f)).map((f) => `${dir}/${f}`)),
  ...readdirSync(path.join(root, "js")).filter((f) => f.startsWith("tab")).map((f) => `js/${f}`),
  "scripts/probe.mjs",
];

test("no consumer keeps a copy of the base URL, a message text, the All Inputs Failed words or the list of terminal statuses", () => {
  const terminal = statuses().filter(isOver);
  // The words as a value of their own (a constant, a return value, a pattern), in any case; prose
  // that names them (help text, advice, a preset's label) is not a copy of the rule.
  const allInputsFailed = crate.allInputsFailedText.replaceAll(" ", "\\s+");
  const ownValue = new RegExp(`(?:[=(,]|return)\\s*(["'\`/])${allInputsFailed}\\1`, "i");
  const fixedWords = Object.values(crate.messages).flatMap((m) => m.split(/\{\w+\}/)).filter((part) => part.length > 12);
  for (const file of CONSUMERS) {
    // Comments may name a value; code may not hold one.
    const code = read(file).replace(/^\s*(\/\/|\*|#).*$/gm, "").replace(/placeholder="[^"]*"/g, "");
    assert.ok(!code.includes(crate.defaults.poller.baseUrl), `${file} holds the default base URL`);
    for (const words of fixedWords) assert.ok(!code.includes(words), `${file} holds the engine's text "${words}"`);
    assert.doesNotMatch(code, ownValue, `${file} holds the All Inputs Failed words: read ALL_INPUTS_FAILED_TEXT or isAllInputsFailed from captaindata-poller/rules`);
    for (const line of code.split("\n")) {
      const listed = terminal.filter((s) => line.includes(`"${s}"`));
      assert.ok(listed.length < 3 || !/Set\(|\[|includes/.test(line), `${file} lists terminal statuses itself: ${line.trim()}`);
    }
  }
});

test("the package ships the generated module and its types as captaindata-poller/rules", async () => {
  const { execFileSync } = await import("node:child_process");
  const [{ files }] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], { cwd: root, encoding: "utf8" }));
  const shipped = new Set(files.map((f) => f.path));
  const { exports } = JSON.parse(read("package.json"));
  const entry = exports["./rules"];
  for (const file of [entry.types, entry.default]) assert.ok(shipped.has(file.replace(/^\.\//, "")), `${file} is not in npm pack's output`);
  const shippedRules = await import(path.join(root, entry.default));
  assert.deepEqual({ ...shippedRules.DEFAULTS }, { ...(await import("../js/rules.js")).DEFAULTS }, "dist/rules.js is the built js/rules.js");
});
