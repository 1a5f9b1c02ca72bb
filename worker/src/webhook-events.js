// Which Captain Data webhook event a body is, as the package says: its one classifier (the
// crate's, exported as `classifyWebhook`) reads the raw body here, in `webhookReceived` and in
// `pollStep({ webhook })`. Only the end events are a reason to step now; "Created" and anything
// unknown change nothing.
import { classifyWebhook } from "captaindata-poller";

/**
 * @param {Record<string, unknown>} body the webhook's JSON body, as received
 * @returns {"succeeded" | "failed" | null} null for Created and unknown events
 */
export function webhookEvent(body) {
  const kind = classifyWebhook(body);
  return kind === "succeeded" || kind === "failed" ? kind : null;
}
