// What stops a command from outside: Ctrl-C (SIGINT), SIGTERM (kill, a service manager),
// SIGHUP (the terminal closed), the end of the npx that started it, and the reader of stdout
// going away (EPIPE: `| head`). The first one asks the command to stop (its `on` listeners:
// the poller stops, the batch being written is finished); a second signal exits at once.
// A closed pipe is said nothing about: the reader had what it wanted.
import { readFileSync } from "node:fs";
import { EXIT } from "./exit-codes.mjs";
import { printable } from "./progress.mjs";

export const EXIT_OF = Object.freeze({
  SIGINT: EXIT.INTERRUPTED,
  SIGHUP: EXIT.HANGUP,
  SIGTERM: EXIT.TERMINATED,
  EPIPE: EXIT.PIPE_CLOSED,
  NPX_GONE: EXIT.TERMINATED,
  NPX_SIGINT: EXIT.INTERRUPTED,
});
const SPOKEN = { SIGINT: "Ctrl-C", SIGHUP: "SIGHUP", SIGTERM: "SIGTERM", NPX_GONE: "the end of npx", NPX_SIGINT: "SIGINT to npx" };

/**
 * Installs the handlers. `reporter` (set later with `useReporter`) says what happens.
 * @returns {{ reason: null | "SIGINT" | "SIGHUP" | "SIGTERM" | "EPIPE" | "NPX_GONE" | "NPX_SIGINT", readonly requested: boolean,
 *   readonly exitCode: number, readonly spoken: string, on(fn: () => void): void,
 *   request(reason: string): void, useReporter(r: { say(t: string): void, end(): void }): void }}
 */
export function catchStops(proc = process, env = process.env) {
  const listeners = [];
  let stoppedAt = 0;
  let reporter = { say: (text) => proc.stderr.write(`${printable(text)}\n`), end() {} };
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
      const fromNpx = reason.startsWith("NPX_");
      const again = reason === "NPX_GONE" ? "npx, which started this command, has exited" : fromNpx ? "the same signal again to exit at once" : `${SPOKEN[reason]} again to exit at once`;
      if (stops.requested) {
        if (!signal || reason === "NPX_GONE") return; // already stopping: a closed pipe or npx's end changes nothing
        // A Ctrl-C typed under npx reaches this process and npx's shell alike: one stop, seen twice.
        if (reason === "NPX_SIGINT" && stops.reason !== "NPX_SIGINT") return;
        if (reason === "SIGINT" && stops.reason === "NPX_SIGINT" && Date.now() - stoppedAt < 1000) return;
        reporter.end();
        reporter.say(`\nsecond ${SPOKEN[reason]}: exiting now (the state file, if any, still matches the rows written)`);
        return exit(EXIT_OF[reason]);
      }
      stops.reason = reason;
      stoppedAt = Date.now();
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
  watchNpx(proc, env, { gone: () => stops.request("NPX_GONE"), signalled: () => stops.request("NPX_SIGINT") });
  // An error on stderr (its reader went away, the terminal hung up) cannot be reported anywhere.
  proc.stderr.on("error", () => {});
  return stops;
}

/** Shells npm starts a bin with (`sh -c`): they catch SIGINT while they wait, and pass it on to no one. */
const SHELLS = new Set(["sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "busybox"]);

/** `/proc/<pid>/…` on Linux; null elsewhere, or once the process is gone. */
function procFile(pid, name) {
  try {
    return readFileSync(`/proc/${pid}/${name}`, "utf8");
  } catch {
    return null;
  }
}

/** The parent's pid and its count of voluntary context switches (it wakes up only for a signal while it waits). */
function shellState(pid) {
  const status = procFile(pid, "status");
  if (status === null) return null;
  const field = (name) => Number(new RegExp(`^${name}:\\s*(\\d+)`, "m").exec(status)?.[1]);
  return { ppid: field("PPid"), wakeups: field("voluntary_ctxt_switches") };
}

/**
 * Under `npx` (npm exec) this process is npm's grandchild: npm runs `sh -c captaindata-poller …`
 * and passes SIGINT and SIGTERM on to that shell only. SIGTERM ends the shell, so this process
 * is handed to another parent: stop as on SIGTERM (`gone`). SIGINT is caught by the shell
 * (dash, Debian's sh), which goes on waiting, then dies of it once this process ends: npx would
 * exit 130 after the whole run. Waiting in wait(2), the shell wakes up only for a signal, so
 * a new wake-up of the shell (Linux: its context switches in /proc) is that SIGINT (`signalled`).
 * A stop and continue (Ctrl-Z, fg) wakes it too (SIGCHLD): counted again after a SIGCONT.
 */
function watchNpx(proc, env, { gone, signalled }) {
  if (env.npm_command !== "exec") return;
  const parent = proc.ppid;
  const comm = procFile(parent, "comm")?.trim();
  const start = shellState(parent);
  const shell = SHELLS.has(comm) && start !== null ? { npm: start.ppid, wakeups: start.wakeups } : null;
  proc.on("SIGCONT", () => {
    if (shell) shell.wakeups = null;
  });
  const timer = setInterval(() => {
    const now = shell ? shellState(parent) : null;
    // This process or the shell was handed to another parent: npm, or the shell, is gone.
    if (proc.ppid !== parent || (shell && (now === null || now.ppid !== shell.npm))) {
      clearInterval(timer);
      return gone();
    }
    if (!shell) return undefined;
    if (shell.wakeups !== null && now.wakeups > shell.wakeups) signalled();
    shell.wakeups = now.wakeups;
    return undefined;
  }, 500);
  timer.unref();
}
