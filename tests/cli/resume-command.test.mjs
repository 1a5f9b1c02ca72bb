// The command printed on Ctrl-C (fast, no process): it runs the CLI the way it was started and
// survives a shell (quoting), with the flags that shape the output and never a secret.
import assert from "node:assert/strict";
import { test } from "node:test";
import { invocation, resumeCommand, shellQuote } from "../../bin/resume-command.mjs";

test("the command starts the CLI the way it was started", () => {
  assert.deepEqual(invocation({ npm_command: "exec" }, "/p/node_modules/.bin/captaindata-poller"), ["npx", "captaindata-poller"]);
  assert.deepEqual(invocation({ PATH: "/usr/bin:/p/node_modules/.bin" }, "/p/node_modules/.bin/captaindata-poller"), ["captaindata-poller"]);
  const [direct] = invocation({ PATH: "/usr/bin" }, "/p/node_modules/.bin/captaindata-poller");
  assert.match(direct, /node_modules\/\.bin\/captaindata-poller$/, "a bin not on PATH is named by its path");
  assert.equal(invocation({}, `${process.cwd()}/bin/captaindata-poller.mjs`).join(" "), "node bin/captaindata-poller.mjs");
});

test("it carries the output and connection flags, --cursor only without --state, and quotes for the shell", () => {
  const values = { out: "my rows.ndjson", "base-url": "http://127.0.0.1:8080/v3", interval: "1s", quiet: true, "api-key-file": "key.txt", inputs: "in.csv" };
  const command = resumeCommand({ jobUid: "j-1", values, cursor: "cdp1.abc=" }, ["npx", "captaindata-poller"]);
  assert.equal(command, "npx captaindata-poller watch j-1 --out 'my rows.ndjson' --base-url http://127.0.0.1:8080/v3 --api-key-file key.txt --interval 1s --cursor cdp1.abc= --quiet");
  const withState = resumeCommand({ jobUid: "j-1", values: { state: "s.json" }, cursor: "cdp1.abc" }, ["captaindata-poller"]);
  assert.equal(withState, "captaindata-poller watch j-1 --state s.json");
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
});
