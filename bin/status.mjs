// `status <jobUid>`: one read of the run's status through the package (a status-first
// JobPoller stopped at its first status), printed for a human or as JSON (`--json`).
import { optionError } from "./connection.mjs";
import { EXIT, exitCodeFor } from "./exit-codes.mjs";
import { failureText } from "./failure-text.mjs";
import { loadPackage, settle } from "./package-entry.mjs";
import { classifyStatus, isAllInputsFailed } from "captaindata-poller/rules";
import { missingOfRun, missingText } from "./missing-rows.mjs";
import { printable } from "./progress.mjs";
import { failsAtOnce, observedFetch, refusedText } from "./requests.mjs";

const FIELDS = [
  ["status", "status"],
  ["name", "name"],
  ["rows", (run) => (run.rowCount === null ? null : `${run.rowCount.toLocaleString("en")}${run.totalRowCount === null ? "" : ` (total ${run.totalRowCount.toLocaleString("en")})`}`)],
  ["inputs", "numberInputs"],
  ["workflow", "workflowUid"],
  ["started", "startTime"],
  ["finished", "finishTime"],
  ["error", "errorMessage"],
];

/** The run as lines for a person: `status    running`, … (absent fields left out). */
export function describeRun(jobUid, run) {
  const lines = [`run ${jobUid}`];
  for (const [label, field] of FIELDS) {
    const value = typeof field === "function" ? field(run) : run[field];
    // The server's texts (a name, an error) cannot carry control sequences to the terminal.
    if (value !== null && value !== undefined && value !== "") lines.push(`  ${label.padEnd(9)} ${printable(value)}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * `--exit-status`: the exit code of the run's state, by the crate's classification
 * (src/api/status.rs, through the package's rules): an "All Inputs Failed" message wins over
 * the status; a status the crate does not know is a run still going.
 */
export function exitCodeOfRun(run, missing = null) {
  if (isAllInputsFailed(run.errorMessage)) return EXIT.RUN_FAILED;
  // Ended with rows known missing (the worker's rows_missing): its own code, not "failed".
  if (missing) return EXIT.ROWS_MISSING;
  const runClass = classifyStatus(run.status);
  if (runClass === "succeeded") return EXIT.OK;
  if (runClass === "failed") return EXIT.RUN_FAILED;
  return EXIT.NOT_ENDED;
}

/** Resolves with the exit code: 0 once the run was read, whatever its status (`--exit-status`: by its state). */
export async function status({ jobUid, values, connection, access, reporter }) {
  const { JobPoller } = await loadPackage();
  let run = null;
  let poller;
  let refused = null;
  const requests = observedFetch({
    onNoAnswer(reason, { first }) {
      if (!failsAtOnce(reason, { first })) return;
      refused = reason;
      poller.stop();
    },
  });
  // The run body as read: its `rows_missing` (the worker's) is not in the package's RunStatus.
  let body = null;
  const fetch = async (input, init) => {
    const response = await requests.fetch(input, init);
    if (response?.ok && body === null) body = response.clone().json().catch(() => null);
    return response;
  };
  try {
    poller = new JobPoller({
      ...connection,
      fetch,
      jobUid,
      readMode: "status", // the first request is the run's status
      onStatus(seen) {
        run ??= seen;
        poller.stop();
      },
      onCallbackError() {},
      onError() {}, // reported by the CLI, redacted (not the package's raw console line)
    });
  } catch (error) {
    throw error instanceof TypeError ? optionError(error) : error;
  }
  const outcome = await settle(poller.start());
  if (run) {
    const missing = missingOfRun(await body);
    process.stdout.write(values.json ? `${JSON.stringify(run, null, 2)}\n` : describeRun(jobUid, run));
    if (missing && !values.json) process.stdout.write(`  ${missingText(missing)}\n`);
    return values["exit-status"] ? exitCodeOfRun(run, missing) : EXIT.OK;
  }
  if (refused) {
    reporter.say(`error: ${refusedText(refused, values)}`);
    return EXIT.GAVE_UP;
  }
  const error = outcome.error;
  if (error instanceof TypeError) throw optionError(error);
  reporter.say(`error: ${error ? failureText(error, { access, lastNoAnswer: requests.seen.lastNoAnswer }) : "the run's status could not be read"}`);
  return error ? exitCodeFor(error) : EXIT.RUN_FAILED;
}
