// What stops a command from outside: Ctrl-C (SIGINT), SIGTERM (kill, a service manager),
// SIGHUP (the terminal closed), the end of the npx that started it, and the reader of stdout
// going away (EPIPE: `| head`). The first one asks the command to stop (its `on` listeners:
// the poller stops, the batch being written is finished); a second signal exits at once.
// A closed pipe is said nothing about: the reader had what it wanted.
import { EXIT } from "./exit-codes.mjs";

export const EXIT_OF = Object.freeze({ SIGINT: EXIT.INTERRUPTED, SIGHUP: EXIT.HANGUP, SIGTERM: EXIT.TERMINATED, EPIPE: EXIT.PIPE_CLOSED, NPX_GONE: EXIT.TERMINATED });
const SPOKEN = { SIGINT: "Ctrl-C", SIGHUP: "SIGHUP", SIGTERM: "SIGTERM", NPX_GONE: "the end of npx" };

/**
 * Installs the handlers. `reporter` (set later with `useReporter`) says what happens.
 * @returns {{ reason: null | "SIGINT" | "SIGHUP" | "SIGTERM" | "EPIPE" | "NPX_GONE", readonly requested: boolean,
 *   readonly exitCode: number, readonly spoken: string, on(fn: () => void): void,
 *   request(reason: string): void, useReporter(r: { say(t: string): void, end(): void }): void }}
 */
export function catchStops(proc = process, env = process.env) {
  const listeners = [];
  let reporter = { say: (text) => proc.stderr.write(`${text}\n`), end() {} };
  const exit = (code) => {
    reporter.end();
    proc.exit(code);
  };
  const stops = {
    reason: null,
    get requested() {
      return stops.reason !== null;
    },
    get exitCode() {
      return EXIT_OF[stops.reason] ?? EXIT.INTERRUPTED;
    },
    /** How the stop is named in messages: "Ctrl-C", "SIGTERM", "SIGHUP". */
    get spoken() {
      return SPOKEN[stops.reason] ?? stops.reason;
    },
    on(fn) {
      if (stops.requested) fn();
      else listeners.push(fn);
    },
    useReporter(next) {
      reporter = next;
    },
    request(reason) {
      const signal = reason !== "EPIPE";
      const again = reason === "NPX_GONE" ? "npx, which started this command, has exited" : `${SPOKEN[reason]} again to exit at once`;
      if (stops.requested) {
        if (!signal || reason === "NPX_GONE") return; // already stopping: a closed pipe or npx's end changes nothing
        reporter.end();
        reporter.say(`\nsecond ${SPOKEN[reason]}: exiting now (the state file, if any, still matches the rows written)`);
        return exit(EXIT_OF[reason]);
      }
      stops.reason = reason;
      if (listeners.length === 0) return exit(EXIT_OF[reason]); // nothing to finish
      if (signal) reporter.say(`stopping (${again})…`);
      for (const fn of listeners) fn();
    },
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) proc.on(signal, () => stops.request(signal));
  // stdout's reader went away: stop. Other write errors (a full disk) reach the rows'
  // writer through its write callback; with no command to tell, they end the process here.
  proc.stdout.on("error", (error) => {
    if (error?.code === "EPIPE") return stops.request("EPIPE");
    if (listeners.length > 0) return undefined;
    reporter.say(`captaindata-poller: cannot write stdout (${error?.code ?? error?.message})`);
    return exit(EXIT.RUN_FAILED);
  });
  watchNpx(proc, env, () => stops.request("NPX_GONE"));
  // An error on stderr (its reader went away, the terminal hung up) cannot be reported anywhere.
  proc.stderr.on("error", () => {});
  return stops;
}

/**
 * `npx` (npm exec) exits on SIGTERM without passing it on (npm 11), leaving this process to
 * poll and write on its own: when the npx that started it is gone, stop as on SIGTERM.
 */
function watchNpx(proc, env, gone) {
  if (env.npm_command !== "exec") return;
  const parent = proc.ppid;
  const timer = setInterval(() => {
    if (proc.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, 500);
  timer.unref();
}

