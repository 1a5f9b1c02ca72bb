#!/usr/bin/env node
// `npx captaindata-poller watch|run|status`: the command line over the package's Node entry.
// This file dispatches, turns mistakes into exit 2, and owns Ctrl-C: the first one stops the
// watch cleanly (it prints how to resume), a second one exits at once.
import { readFileSync } from "node:fs";
import { connectionFrom, redactor } from "./connection.mjs";
import { EXIT } from "./exit-codes.mjs";
import { COMMANDS, parseCommand } from "./flags.mjs";
import { HELP } from "./help.mjs";
import { createReporter } from "./progress.mjs";
import { run } from "./run.mjs";
import { status } from "./status.mjs";
import { UsageError } from "./usage-error.mjs";
import { watch } from "./watch.mjs";

const COMMAND_RUNNERS = {
  watch: (ctx) => watch({ ...ctx, jobUid: ctx.target }),
  run: (ctx) => run({ ...ctx, workflowUid: ctx.target }),
  status: (ctx) => status({ ...ctx, jobUid: ctx.target }),
};

/** The first Ctrl-C asks the command to stop (`on` listeners); the second exits now. */
function catchInterrupts(reporter) {
  const listeners = [];
  const interrupt = {
    requested: false,
    on(fn) {
      if (interrupt.requested) fn();
      else listeners.push(fn);
    },
  };
  process.on("SIGINT", () => {
    if (interrupt.requested) {
      reporter.end();
      process.stderr.write("\nsecond Ctrl-C: exiting now (the state file, if any, still matches the rows written)\n");
      process.exit(EXIT.INTERRUPTED);
    }
    interrupt.requested = true;
    if (listeners.length === 0) process.exit(EXIT.INTERRUPTED); // nothing to finish
    reporter.say("stopping (Ctrl-C again to exit at once)…");
    for (const fn of listeners) fn();
  });
  return interrupt;
}

async function main(argv, env) {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(HELP.main);
    return command === undefined ? EXIT.USAGE : EXIT.OK;
  }
  if (command === "--version" || command === "-v") {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    process.stdout.write(`${version}\n`);
    return EXIT.OK;
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    throw new UsageError(`unknown command ${JSON.stringify(command)}: expected watch, run or status (see captaindata-poller --help)`);
  }
  const parsed = parseCommand(command, rest);
  if (parsed.help) {
    process.stdout.write(HELP[command]);
    return EXIT.OK;
  }
  const { values, target } = parsed;
  const connection = await connectionFrom(values, env);
  const reporter = createReporter({ quiet: values.quiet, env, redact: redactor(connection.apiKey) });
  const interrupt = catchInterrupts(reporter);
  try {
    return await COMMAND_RUNNERS[command]({ target, values, connection, reporter, interrupt });
  } catch (error) {
    reporter.end();
    throw Object.assign(error, { redact: redactor(connection.apiKey) });
  }
}

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (error) => {
    const redact = error?.redact ?? ((t) => t);
    if (error instanceof UsageError) {
      process.stderr.write(`captaindata-poller: ${redact(error.message)}\n`);
      process.exit(EXIT.USAGE);
    }
    process.stderr.write(`captaindata-poller: ${redact(error?.message ?? String(error))}\n`);
    process.exit(EXIT.RUN_FAILED);
  },
);
