#!/usr/bin/env node
// `npx captaindata-poller watch|run|status`: the command line over the package's Node entry.
// This file dispatches: `--help`/`--version` wherever they are, mistakes into exit 2 (with
// the usage lines when the command line does not parse), and the stops from outside
// (signals, a closed stdout) to the command, which finishes what it is writing.
import { readFileSync } from "node:fs";
import { connectionFrom, redactor } from "./connection.mjs";
import { didYouMean } from "./did-you-mean.mjs";
import { EXIT } from "./exit-codes.mjs";
import { COMMANDS, parseCommand } from "./flags.mjs";
import { HELP, USAGE } from "./help.mjs";
import { createReporter, printable } from "./progress.mjs";
import { run } from "./run.mjs";
import { runV4 } from "./run-v4.mjs";
import { status } from "./status.mjs";
import { catchStops } from "./stop-signals.mjs";
import { UsageError } from "./usage-error.mjs";
import { v4ConnectionFrom } from "./v4-launch.mjs";
import { watch } from "./watch.mjs";

const COMMAND_RUNNERS = {
  watch: (ctx) => watch({ ...ctx, jobUid: ctx.target }),
  run: (ctx) => (ctx.values.v4 ? runV4({ ...ctx, action: ctx.target }) : run({ ...ctx, workflowUid: ctx.target })),
  status: (ctx) => status({ ...ctx, jobUid: ctx.target }),
};

const version = () => JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;

/** `--help`, `-h`, `help [command]` or `--version` anywhere before `--`: the text to print, or null. */
function helpOrVersion(argv) {
  const words = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  const command = words.find((word) => Object.hasOwn(COMMANDS, word));
  if (words.includes("--help") || words.includes("-h") || words[0] === "help") return HELP[command] ?? HELP.main;
  if (words.includes("--version") || words.includes("-v") || words.includes("-V")) return `${version()}\n`;
  return null;
}

async function main(argv, env, stops) {
  const [command, ...rest] = argv;
  const shown = helpOrVersion(argv);
  if (shown !== null) {
    process.stdout.write(shown);
    return EXIT.OK;
  }
  if (command === undefined) {
    // Not asked for: the help goes to stderr, stdout stays for rows.
    process.stderr.write(HELP.main);
    return EXIT.USAGE;
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    if (command.startsWith("-")) throw new UsageError(`${command}: a command (watch, run or status) comes first`, { usage: "main" });
    throw new UsageError(`unknown command ${JSON.stringify(command)}${didYouMean(command, Object.keys(COMMANDS))}`, { usage: "main" });
  }
  const { values, target } = parseCommand(command, rest);
  // `run --v4`: through the worker, with its admin token; the read token comes from the launch.
  const { connection, access, v4 } = command === "run" && values.v4 ? v4ConnectionFrom(values, env, target) : await connectionFrom(values, env);
  const redact = redactor(access.secrets);
  const reporter = createReporter({ quiet: values.quiet, env, redact });
  stops.useReporter(reporter);
  try {
    return await COMMAND_RUNNERS[command]({ target, values, connection, access, v4, reporter, interrupt: stops });
  } catch (error) {
    reporter.end();
    throw Object.assign(error, { redact });
  }
}

const stops = catchStops();
main(process.argv.slice(2), process.env, stops).then(
  (code) => process.exit(code),
  (error) => {
    const redact = error?.redact ?? ((t) => t);
    // The message may quote outside input (a --state file's job uid, a flag's value): no
    // control character of it reaches the terminal.
    process.stderr.write(`captaindata-poller: ${printable(redact(error?.message ?? String(error)))}\n`);
    if (error instanceof UsageError) {
      if (error.usage) process.stderr.write(`${USAGE[error.usage]}\n`);
      process.exit(EXIT.USAGE);
    }
    process.exit(EXIT.RUN_FAILED);
  },
);
