// On a terminal: the progress line is drawn on stderr (rewritten in place), never on stdout,
// cut to the terminal's width (and redrawn when it is resized), cleared before any other
// line and at the end; NO_COLOR keeps the line with no escape code; TERM=dumb gets plain
// lines. Uses script(1) for a pseudo-terminal; skipped where it is missing.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { test } from "node:test";
import { CLI, ESCAPE, cliEnv, ndjsonIds, readScratch, rowIds, simFlags, useCliSim, waitFor } from "./cli-fixture.mjs";

const ctx = useCliSim();
const hasScript = spawnSync("script", ["--version"]).status === 0;
const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * Runs the CLI under a pseudo-terminal of `cols` columns, stdout redirected to `out`; what the
 * terminal showed fills `screen`, `exit` resolves with the exit code; `type(text)` types keys.
 */
function startOnTerminal(args, out, env = {}, cols = 100, { pipe = "" } = {}) {
  // No echo: a typed ^C would be drawn after the progress line by the terminal, not the CLI.
  const setup = `stty cols ${cols} rows 24 -echo; tty > ${quote(`${out}.tty`)}`;
  const cli = [process.execPath, CLI, ...args].map(quote).join(" ");
  const command = pipe ? `${setup}; ${cli} | ${pipe} > ${quote(out)}` : `${setup}; exec ${cli} > ${quote(out)}`;
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ctx.dir, env: cliEnv({ TERM: "xterm", ...env }), stdio: ["pipe", "pipe", "pipe"] });
  const run = { screen: "", type: (text) => child.stdin.write(text) };
  child.stdout.setEncoding("utf8").on("data", (s) => (run.screen += s));
  run.exit = new Promise((resolve) => child.on("close", (code) => {
    ctx.texts.push({ where: "terminal", text: run.screen });
    resolve(code);
  }));
  return run;
}

async function onTerminal(args, out, env = {}) {
  const run = startOnTerminal(args, out, env);
  const code = await run.exit;
  return { code, screen: run.screen };
}

/** What the terminal got, cut at each "erase the line": progress drawings and the other lines. */
const pieces = (screen) => screen.split("\r\x1b[2K").map((piece) => piece.replace(/\x1b\[\d*m/g, ""));
const isProgress = (piece) => /^[\d,]+ rows? · /.test(piece);
const columns = (piece) => [...piece].length;

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

test("NO_COLOR: the line rewritten with carriage returns and no escape code at all; --quiet: no line", { skip: !hasScript && "script(1) not installed" }, async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 1200, durationMs: 800, arrival: { bursts: 2 } });
  const plain = await onTerminal(["watch", jobUid, ...simFlags(ctx)], "nocolor.ndjson", { NO_COLOR: "1" });
  assert.equal(plain.code, 0, plain.screen);
  assert.match(plain.screen, /\r1,200 rows · /, "rewritten in place");
  assert.doesNotMatch(plain.screen, /\x1b/, "no escape code");
  assert.match(plain.screen, /\r +\rdone: run finished/, "cleared with spaces before the last line");

  const quiet = await onTerminal(["watch", jobUid, "--quiet", ...simFlags(ctx)], "quiet.ndjson");
  assert.equal(quiet.code, 0, quiet.screen);
  assert.doesNotMatch(quiet.screen, /\x1b/);
  assert.deepEqual(ndjsonIds(readScratch(ctx, "quiet.ndjson")), rowIds(1200));
});

test("TERM=dumb: plain log lines, no line rewritten, no escape code", { skip: !hasScript && "script(1) not installed" }, async () => {
  // The run ends once the CLI has seen it running (a fixed short run could end before the first read).
  const { jobUid } = ctx.sim.createJob({ rows: 1200, durationMs: 600_000 });
  const run = startOnTerminal(["watch", jobUid, ...simFlags(ctx)], "dumb.ndjson", { TERM: "dumb" });
  await waitFor(() => /^status: running/m.test(run.screen), "a first status line");
  ctx.sim.finish(jobUid);
  const dumb = { code: await run.exit, screen: run.screen };
  assert.equal(dumb.code, 0, dumb.screen);
  assert.doesNotMatch(dumb.screen, /\x1b/);
  assert.doesNotMatch(dumb.screen, /\r(?!\n)/, "no carriage return but the terminal's own line ends");
  assert.match(dumb.screen, /^status: running/m);
});

test("the line fits the terminal, follows a resize, and is cleared before other lines and at the end (Ctrl-C typed)", { skip: !hasScript && "script(1) not installed", timeout: 60_000 }, async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 3000, durationMs: 60_000, arrival: { bursts: 6 } });
  const run = startOnTerminal(["watch", jobUid, "--state", "narrow.state.json", ...simFlags(ctx)], "narrow.ndjson", {}, 32);
  await waitFor(() => pieces(run.screen).some((p) => isProgress(p) && p.startsWith("500 rows")), "a first progress line with rows");
  const narrow = pieces(run.screen).filter(isProgress);
  assert.ok(narrow.every((p) => columns(p) <= 31), `at most 31 columns on a 32-column terminal: ${JSON.stringify(narrow)}`);
  assert.ok(narrow.some((p) => p.endsWith(" · …")), "the figures that do not fit are left out, whole");

  // The window grows: the next drawing uses the new width (SIGWINCH), without waiting for news.
  const mark = run.screen.length;
  execFileSync("stty", ["-F", readScratch(ctx, "narrow.ndjson.tty").trim(), "cols", "90"]);
  await waitFor(() => pieces(run.screen.slice(mark)).some((p) => isProgress(p) && columns(p) > 31), "a wider drawing after the resize");

  run.type("\x03"); // Ctrl-C, typed on the terminal
  assert.equal(await run.exit, 130, run.screen);
  const all = pieces(run.screen);
  assert.ok(all.every((p) => columns(p.split("\r\n")[0]) <= 89), "never wider than the terminal");
  // A drawing is always followed by an erase: no other line is ever written after it on its row.
  assert.deepEqual(all.filter((p) => isProgress(p) && /\n/.test(p)), [], "no line written over the progress line");
  assert.ok(!isProgress(all.at(-1)), "erased at the end");
  assert.match(run.screen, /interrupted: [\d,]+ rows? written\. To resume:\r\n {2}.*watch /);
  assert.ok(!ESCAPE.test(readScratch(ctx, "narrow.ndjson")));
});

test("on a terminal, `| head -n 3`: the progress line is erased, silently, before the prompt comes back", { skip: !hasScript && "script(1) not installed", timeout: 60_000 }, async () => {
  const { jobUid } = ctx.sim.createJob({ rows: 3000, durationMs: 60_000, arrival: { bursts: 3 }, rowBytes: 2000 });
  const run = startOnTerminal(["watch", jobUid, ...simFlags(ctx)], "head.ndjson", {}, 100, { pipe: "head -n 3" });
  await run.exit;
  assert.deepEqual(ndjsonIds(readScratch(ctx, "head.ndjson")), rowIds(3));
  const all = pieces(run.screen);
  assert.ok(all.some(isProgress), "the line was shown");
  assert.equal(all.at(-1), "", `erased at the end, and nothing said after: ${JSON.stringify(all.at(-1))}`);
});

