// `--help` texts: one per command, each with an example; the exit codes in the top-level
// help only (each command's help points there).
import { DEFAULTS } from "captaindata-poller/rules";
import { EXIT_CODES_HELP } from "./exit-codes.mjs";

const CONNECTION = `Connection:
  CAPTAINDATA_API_KEY       the API key (never printed); or --api-key-file FILE
  CAPTAINDATA_PROJECT_ID    the project uid; or --project-id ID
  --base-url URL            another API root, ending in its version (/v3): a proxy such as
                            the project's worker, or the simulator of npm start
                            (http://127.0.0.1:8080/v3). Default ${DEFAULTS.baseUrl}
                            http:// only to localhost, 127.0.0.1 or [::1]: never the
                            credentials in clear text to another machine
  CAPTAINDATA_READ_TOKEN    through the worker: the run's read token (from its /track), sent
                            as the x-read-token header; or --read-token TOKEN. With a read
                            token, however given (also --header "x-read-token: …"), the
                            key and project of the environment are not sent to --base-url
  --header "NAME: VALUE"    an extra request header, e.g. a proxy's own token (repeatable).
                            Without a key, --base-url needs one of these two: the
                            credentials the proxy checks. Token and header values are
                            never printed (nor put in the resume command: give them again)
  --header @FILE            the headers of FILE, one "NAME: VALUE" per line (# comments)
  --header-env "NAME: VAR"  the header NAME with the value of the variable VAR: a value
                            kept out of the command line, which other users can see
  -h, --help                this help`;

const EXIT_CODES_POINTER = "Exit codes: listed by captaindata-poller --help.";

const OUTPUT = `Output (rows only on stdout, or in --out; progress and messages on stderr):
  --format ndjson|csv|json  ndjson (default): one JSON object per line.
                            csv: a header from the fields of the first rows, and a last
                            column _extra_fields: a field that first appears later goes
                            there, as JSON, and is named once on stderr (nothing is lost);
                            objects and arrays are written as JSON. A cell or header that
                            starts with = + - @, a tab or a carriage return gets a leading '
                            so that a spreadsheet shows it as text, not a formula (numbers
                            stay numbers).
                            json: one array, rows written as they arrive, closed at the end
  --csv-raw                 csv: write such cells as they are (for a program, not a
                            spreadsheet)
  --out FILE                write the rows to FILE instead of stdout (- : stdout); a new
                            file is readable by you only (mode 0600). An existing file is
                            not replaced without --force (or continued with --state)
  --force                   replace an existing --out file
  --state FILE              keep where the rows stopped in FILE, after every written batch;
                            the same command again continues there, with no row twice
  --cursor TOKEN            start after the rows a cursor covers (printed on Ctrl-C when there
                            is no --state; with --out, the file is continued)
  -q, --quiet               no progress line and no log lines (errors are still printed)
Polling:
  --interval DURATION       time between reads, e.g. 10s, 1m, 500ms (default 10s; below 1s
                            only against a --base-url on localhost, such as the simulator)
  --timeout DURATION        give up after this long, exit 4 (default 6h)

Progress: on a terminal, one line rewritten in place (rows, status, requests, retries,
elapsed), cut to the terminal's width; piped or redirected, or TERM=dumb, plain log lines.
NO_COLOR: no colours and no escape codes (the line is rewritten with a carriage return).
Rows shown on a terminal carry no control character (removed from CSV cells, escaped in
JSON). Ctrl-C (or SIGTERM, SIGHUP, also sent to npx) stops at once, finishes the batch being
written, saves the state and prints the command that resumes; a second one exits
immediately. Giving up (--timeout, retries exhausted) prints that command too. A refused
connection before any answer ends the command at once (exit 4). When the reader of stdout
goes away (\`| head -n 3\`), the poller stops at once and exits 141, silently.`;

/** The usage lines printed after a command line that does not parse. */
export const USAGE = {
  main: `Usage:
  captaindata-poller watch <jobUid> [options]
  captaindata-poller run <workflowUid> --inputs FILE [options]
  captaindata-poller run <action> --v4 --inputs FILE --base-url <worker origin> [options]
  captaindata-poller status <jobUid> [--json] [--exit-status]
Run captaindata-poller --help for more.`,
  watch: "Usage: captaindata-poller watch <jobUid> [options]\nRun captaindata-poller watch --help for the options.",
  run: "Usage: captaindata-poller run <workflowUid> --inputs FILE [options]\n       captaindata-poller run <action> --v4 --inputs FILE --base-url <worker origin> [options]\nRun captaindata-poller run --help for the options.",
  status: "Usage: captaindata-poller status <jobUid> [--json] [--exit-status]\nRun captaindata-poller status --help for the options.",
};

export const HELP = {
  main: `captaindata-poller: watch a Captain Data run (v3, or v4 through the project's worker)
from the terminal and stream its rows

Usage:
  captaindata-poller watch <jobUid> [options]                  write each new row as it arrives
  captaindata-poller run <workflowUid> --inputs FILE [options]  schedule a v3 run, then watch it
  captaindata-poller run <action> --v4 --inputs FILE --base-url <worker origin>
                                                               launch a v4 run through the
                                                               worker, then watch it
  captaindata-poller status <jobUid> [--json] [--exit-status]  one read of a run's status
  captaindata-poller --version

Run captaindata-poller <command> --help for its options and an example.

${CONNECTION}

${EXIT_CODES_HELP}

Example:
  export CAPTAINDATA_API_KEY=… CAPTAINDATA_PROJECT_ID=…
  captaindata-poller watch 5d1c0e6a-… --format csv --out rows.csv --state rows.state.json
`,
  watch: `Usage: captaindata-poller watch <jobUid> [options]

Polls the run and writes each new row once, in order, as it arrives, until the run ends.

${OUTPUT}

${CONNECTION}

${EXIT_CODES_POINTER}

Example:
  captaindata-poller watch 5d1c0e6a-… --out rows.ndjson --state rows.state.json
  # Ctrl-C, then the same command again: it continues after the last row written
  # through the project's worker, with the run's read token (no API key here):
  CAPTAINDATA_READ_TOKEN=… captaindata-poller watch 5d1c0e6a-… --base-url https://<worker>/v3
`,
  run: `Usage: captaindata-poller run <workflowUid> --inputs FILE [options]
       captaindata-poller run <action> --v4 --inputs FILE --base-url <worker origin> [options]

Schedules the v3 workflow (or, with --v4, launches the v4 action through the project's
worker), prints the new run's uid on stderr, then watches it like \`watch\`. With --state,
the run's uid is kept in the state file: the same command again continues that run instead
of launching another one.

Scheduling:
  --inputs FILE             the inputs: a JSON array of objects (or { "inputs": [...] }), or a
                            CSV file whose header names the fields; - reads stdin.
                            JSON when the name ends in .json or the text starts with [ or {
  --steps FILE              a JSON array of steps (default [])
  --job-name NAME           the run's name (default "captaindata-poller <date>")

Captain Data v4 (--v4): its rows come only by callbacks, which the project's worker receives:
  --v4                      launch <action> (e.g. linkedin-extract-people) with the inputs of
                            --inputs, by POST <worker origin>/v4/actions/<action>/async, then
                            read the run through <worker origin>/v3 with the read token the
                            launch answered (never printed)
  --base-url ORIGIN         required: the worker's origin, e.g.
                            https://captaindata-poller.<you>.workers.dev (no /v3 needed)
  CAPTAINDATA_ADMIN_TOKEN   required: the worker's admin token (its ADMIN_TOKEN secret), from
                            the environment only (never a flag, never printed). No API key
                            here: the worker holds it. --steps, --job-name, --read-token,
                            --header, --api-key-file and --project-id are not used
  Exit 6 when the run ended with rows the worker could not recover (the batches named).

${OUTPUT}

${CONNECTION}

${EXIT_CODES_POINTER}

Example:
  captaindata-poller run 0c7a3b1e-… --inputs profiles.csv --job-name "Q3 leads" --format csv --out leads.csv
  # a v4 action, through the project's worker:
  export CAPTAINDATA_ADMIN_TOKEN=…
  captaindata-poller run linkedin-extract-people --v4 --inputs profiles.json \\
    --base-url https://captaindata-poller.<you>.workers.dev --out people.ndjson --state people.state.json
`,
  status: `Usage: captaindata-poller status <jobUid> [--json] [--exit-status]

One read of the run's status (status, row counts, inputs, times, error), printed for a
person, or as JSON on stdout with --json. Exits 0 once the run was read, whatever its
status (like gh run view); 3 if the key is refused or there is no such run; 4 if the API
could not be reached.

  --json                    print the run as one JSON object
  --exit-status             exit by the run's state instead: 0 it succeeded (finished,
                            warning), 1 it failed (shutdown, stopped, All Inputs Failed),
                            5 it has not ended yet (pending, running, paused)

${CONNECTION}

${EXIT_CODES_POINTER}

Example:
  captaindata-poller status 5d1c0e6a-… --json
  # wait for the end, then act on how it ended:
  while captaindata-poller status 5d1c0e6a-… --exit-status >/dev/null; [ $? = 5 ]; do sleep 30; done
`,
};
