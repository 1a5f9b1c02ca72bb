// The exit codes, documented in `--help` and the README. A script can tell "the run failed"
// from "I could not ask" from "I gave up waiting" from "I was stopped" without parsing text.
// Stopped from outside, the code is the shell's own 128 + the signal's number: what `$?`
// would show had the signal killed the process, without the torn output a kill leaves.

export const EXIT = Object.freeze({
  OK: 0,
  RUN_FAILED: 1,
  USAGE: 2,
  ACCESS: 3,
  GAVE_UP: 4,
  NOT_ENDED: 5, // status --exit-status only
  ROWS_MISSING: 6, // the run ended with rows missing (ROWS_MISSING, ROWS_CAP_REACHED)
  HANGUP: 129, // SIGHUP: the terminal closed
  INTERRUPTED: 130, // SIGINT: Ctrl-C
  PIPE_CLOSED: 141, // EPIPE: the reader of stdout went away (`| head`), as SIGPIPE would
  TERMINATED: 143, // SIGTERM: kill, a service manager, a CI timeout
});

const BY_CODE = {
  JOB_FAILED: EXIT.RUN_FAILED,
  ALL_INPUTS_FAILED: EXIT.RUN_FAILED,
  UNAUTHORIZED: EXIT.ACCESS,
  NOT_FOUND: EXIT.ACCESS,
  TIMEOUT: EXIT.GAVE_UP,
  BUDGET_EXHAUSTED: EXIT.GAVE_UP,
  RETRIES_EXHAUSTED: EXIT.GAVE_UP,
  // scheduleWorkflow's own: not retried (a retry could launch the run twice).
  RATE_LIMITED: EXIT.GAVE_UP,
  SERVER_ERROR: EXIT.GAVE_UP,
  NETWORK_ERROR: EXIT.GAVE_UP,
};

/** The exit code for a terminal error; 1 for anything else (the message says what). */
export const exitCodeFor = (error) => BY_CODE[error?.code] ?? EXIT.RUN_FAILED;

/** The table printed by the top-level `--help` (each command's help points to it). */
export const EXIT_CODES_HELP = `Exit codes:
  0    the run succeeded (also "warning": some inputs failed; a note says so)
  1    the run failed (JOB_FAILED, ALL_INPUTS_FAILED), or another error the message names
       (e.g. the disk of --out is full)
  2    usage error: a flag, a file or an environment variable (the message names it)
  3    authentication failed or no such run/workflow (UNAUTHORIZED, NOT_FOUND)
  4    gave up: TIMEOUT, BUDGET_EXHAUSTED, RETRIES_EXHAUSTED (the command that resumes is
       printed), a connection refused before any answer (scheduling: RATE_LIMITED,
       SERVER_ERROR, NETWORK_ERROR)
  5    status --exit-status only: the run has not ended yet
  6    the run ended with rows missing (ROWS_MISSING: rows the worker could not recover;
       ROWS_CAP_REACHED: the worker's row cap): every row stored was written, the batches
       missing are named; also status --exit-status for such a run
  129  stopped by SIGHUP (the terminal closed), as on Ctrl-C
  130  interrupted (Ctrl-C, or SIGINT sent to npx): the batch being written is finished,
       the state saved, and the command that resumes is printed; a second Ctrl-C exits
       at once. A run that ended before the signal exits by how it ended, not 130
  141  the reader of stdout went away (\`| head\`): the poller stops at once, silently;
       --state holds only the batches written whole
  143  stopped by SIGTERM, as on Ctrl-C`;
