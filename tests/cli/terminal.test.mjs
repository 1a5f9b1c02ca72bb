// On a terminal: the progress line is drawn on stderr (rewritten in place), never on stdout;
// NO_COLOR removes colours but keeps the line. Uses script(1) for a pseudo-terminal; skipped
// where it is missing.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { test } from "node:test";
import { CLI, ESCAPE, cliEnv, ndjsonIds, readScratch, rowIds, simFlags, useCliSim } from "./cli-fixture.mjs";

const ctx = useCliSim();
const hasScript = spawnSync("script", ["--version"]).status === 0;
const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Runs the CLI under a pseudo-terminal, stdout redirected to `out`: resolves with what the terminal showed. */
function onTerminal(args, out, env = {}) {
  const command = `${[process.execPath, CLI, ...args].map(quote).join(" ")} > ${quote(out)}`;
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ctx.dir, env: cliEnv({ TERM: "xterm", ...env }), stdio: ["pipe", "pipe", "pipe"] });
  let screen = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (screen += s));
  return new Promise((resolve) => child.on("close", (code) => {
    ctx.texts.push({ where: "terminal", text: screen });
    resolve({ code, screen });
  }));
}

test("a TTY shows one progress line on stderr, rewritten in place; the rows file has no escape code", { skip: !hasScript && "script(1) not installed" }, async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 2500, durationMs: 1500, arrival: { bursts: 3 } });
  const { code, screen } = await onTerminal(["watch", jobUid, ...simFlags(ctx)], "tty.ndjson");
  assert.equal(code, 0, screen);
  assert.match(screen, /\r\x1b\[2K\x1b\[1m2,500 rows\x1b\[22m · /, "the line is rewritten in place, in colour");
  assert.match(screen, / · \d+ requests · \d+ retr(y|ies) · 0:\d\d/);
  assert.doesNotMatch(screen, /^status: /m, "no log lines on a terminal");
  const rows = readScratch(ctx, "tty.ndjson");
  assert.ok(!ESCAPE.test(rows), "stdout (redirected) holds rows only");
  assert.deepEqual(ndjsonIds(rows), rowIds(2500));
});

test("NO_COLOR: the progress line without colours; --quiet: no progress line at all", { skip: !hasScript && "script(1) not installed" }, async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1200, durationMs: 800, arrival: { bursts: 2 } });
  const plain = await onTerminal(["watch", jobUid, ...simFlags(ctx)], "nocolor.ndjson", { NO_COLOR: "1" });
  assert.equal(plain.code, 0, plain.screen);
  assert.match(plain.screen, /\r\x1b\[2K1,200 rows · /);
  assert.doesNotMatch(plain.screen, /\x1b\[\d*m/, "no colour codes");

  const quiet = await onTerminal(["watch", jobUid, "--quiet", ...simFlags(ctx)], "quiet.ndjson");
  assert.equal(quiet.code, 0, quiet.screen);
  assert.doesNotMatch(quiet.screen, /\x1b/);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "quiet.ndjson")), rowIds(1200));
});
