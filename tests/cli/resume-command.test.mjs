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

test("values of --read-token and --header never reach the command; a note says to give them again", async () => {
  const { resumeText } = await import("../../bin/resume-command.mjs");
  const values = { "base-url": "https://w.example/v3", "read-token": "rt_secret_value", header: ["x-proxy-key: hv_secret_value", "x-other:v2_secret"] };
  const text = resumeText({ jobUid: "j-1", values, cursor: "cdp1.x" }, { prefix: ["captaindata-poller"] });
  assert.equal(
    text,
    'To resume:\n  captaindata-poller watch j-1 --base-url https://w.example/v3 --cursor cdp1.x\n  (secrets are not printed; give them again: the read token: set CAPTAINDATA_READ_TOKEN, or add --read-token TOKEN; add --header "x-proxy-key: …" with its value; add --header "x-other: …" with its value)',
  );
  assert.equal(resumeText({ jobUid: "j-1", values: {}, cursor: null }, { prefix: ["x"] }), "To resume:\n  x watch j-1", "no note when nothing is left out");
});

test("the package's texts in the CLI's words: flags for option names, no advice meant for browsers", async () => {
  const { inFlagTerms, optionError } = await import("../../bin/connection.mjs");
  const { withoutBrowserAdvice } = await import("../../bin/failure-text.mjs");
  // The package's text for a request with no response (src/api/errors.rs NO_RESPONSE_TEXT), as RETRIES_EXHAUSTED carries it.
  const noResponse = "no response at all (network error; in a browser most likely CORS: point baseUrl at a proxy such as the Cloudflare worker in worker/) after 5 retries";
  assert.equal(withoutBrowserAdvice(noResponse), "no response at all after 5 retries");
  assert.equal(withoutBrowserAdvice("HTTP 503: busy"), "HTTP 503: busy");
  assert.equal(inFlagTerms("HTTP 404 (GET /jobs/j1; baseUrl has no version segment such as /v3)"), "HTTP 404 (GET /jobs/j1; --base-url has no version segment such as /v3)");
  assert.equal(optionError(new TypeError("Expected `maxDurationMs` to be at most 86400000 (got 1e12)")).message, "--timeout: expected at most 86400000 (got 1e12)");
  assert.equal(optionError(new TypeError("Expected `headers` to be an object")).message, "--header / --read-token: expected an object");
});
