// A poller error as a person wants it: what happened, and what to do next.

const ADVICE = {
  ALL_INPUTS_FAILED: [
    "All Inputs Failed: no input of this run was valid, so it produces no results. Polling stopped at once — asking again cannot help.",
    "Check the run's inputs (URLs, identifiers, the input column) in Captain Data, fix them and launch the run again.",
  ],
  UNAUTHORIZED: [
    "The API refused the credentials (HTTP 401/403).",
    "Check the API key and the project id in Settings — or the proxy's token if you use one.",
  ],
  NOT_FOUND: [
    "There is no run with this jobUid in this project (HTTP 404).",
    "Check the jobUid, and that the project id in Settings is the run's project.",
  ],
  JOB_FAILED: [
    "The run itself failed on Captain Data's side.",
    "Open the run in Captain Data to see why. The rows shown here so far are kept.",
  ],
  TIMEOUT: [
    "Polling gave up after its time limit (maxDurationMs).",
    "Resume later: the cursor is kept, no row will be shown twice.",
  ],
  BUDGET_EXHAUSTED: [
    "The request budget (maxRequests) is spent.",
    "Resume to continue with a new budget: the cursor is kept.",
  ],
  RETRIES_EXHAUSTED: [
    "The API kept failing (rate limit, server errors or network) and the retries ran out.",
    "Wait a moment and press Resume: no row will be shown twice.",
  ],
  BAD_RESPONSE: [
    "The server answered something that is not a Captain Data v3 response.",
    "Check that the base URL in Settings ends with /v3 and points at the API or your proxy.",
  ],
  ABORTED: ["Polling was stopped.", "Press Resume to continue where it stopped."],
};

/**
 * @param {unknown} error a CaptainDataError, a TypeError from option validation, or anything
 * @returns {{ title: string, what: string, todo: string }}
 */
export function adviceFor(error) {
  const code = typeof error?.code === "string" ? error.code : null;
  const known = code ? ADVICE[code] : null;
  if (known) {
    const status = error.runStatus ? ` (run status: ${error.runStatus})` : "";
    return { title: code, what: known[0] + (code === "JOB_FAILED" ? status : ""), todo: known[1] };
  }
  if (error instanceof TypeError) {
    return { title: "Invalid settings", what: String(error.message), todo: "Fix the value named above and start again." };
  }
  return { title: "Unexpected error", what: String(error?.message ?? error), todo: "Reload the page and try again." };
}
