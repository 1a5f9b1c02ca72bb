// Which Captain Data webhook event a body is. Only the end events are a reason to step now;
// "Created" and anything unknown change nothing. The body has no event field, only a message
// ("Job successfully created." / "Job successfully finished." / "Job failed."), so the message
// is matched case-insensitively, word by word ("successfully" is not "success").

const CREATED = /\bcreated\b/;
const FAILED = /\b(failed|failure)\b/;
const SUCCEEDED = /\b(finished|succeeded|success|completed)\b/;

/**
 * @param {Record<string, unknown>} body the webhook's JSON body
 * @returns {"succeeded" | "failed" | null} null for Created and unknown events
 */
export function webhookEvent(body) {
  const said = [body.event, body.type, body.message].filter((v) => typeof v === "string").join(" ").toLowerCase();
  if (CREATED.test(said)) return null;
  if (FAILED.test(said) || body.error === true || (typeof body.error === "string" && body.error !== "")) return "failed";
  if (SUCCEEDED.test(said)) return "succeeded";
  return null;
}

/**
 * What is stored and handed to `pollStep` for an end event: the canonical message of the
 * event (so the package reads it the way the worker classified it) and the error text.
 */
export function webhookHint(jobUid, event, body) {
  return {
    job_uid: jobUid,
    message: event === "failed" ? "Job failed." : "Job successfully finished.",
    error: typeof body.error === "string" ? body.error.slice(0, 500) : null,
  };
}
