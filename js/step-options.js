// The options of `pollStep` and `scheduleWorkflow`, checked as js/options.js checks a poller's.

import { ENDPOINT, common, connection, invalid, object, read } from "./options.js";

/** `pollStep`'s options, checked. */
export function stepOptions(options) {
  const out = read(options, [["deadlineMs", "duration"], ["maxRequests", "count"]], common(options));
  out.webhook = options.webhook == null ? undefined : object("webhook", options.webhook);
  return out;
}

/** `scheduleWorkflow`'s connection, checked, and its body as JSON text. */
export function scheduleOptions(options, body) {
  object("connection", options);
  const out = read(options, ENDPOINT);
  let json;
  try {
    json = typeof body === "object" && body !== null ? JSON.stringify(body) : json;
  } catch {} // a cycle or a BigInt: refused below
  if (typeof json !== "string") throw invalid("body", "a JSON-serialisable object", body);
  Object.assign(out, connection(options));
  // The one request of this connection sends JSON, whatever type the user's headers say.
  out.headers = { ...out.headers, "content-type": "application/json" };
  return [out, json];
}
