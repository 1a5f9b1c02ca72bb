// The worker's routes. Ids are validated as raw path segments (before any decoding), so
// `%2F`, `..` or an empty segment can never reach storage names or upstream URLs.

const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Whether `value` is acceptable as a run or workflow id. */
export const isRunId = (value) => typeof value === "string" && ID.test(value);

const TABLE = [
  // [method, pattern, name, access]
  ["POST", ["v3", "workflows", ":workflowUid", "schedule"], "schedule", "admin"],
  ["POST", ["v3", "jobs", ":jobUid", "track"], "track", "admin"],
  ["POST", ["v3", "jobs", ":jobUid", "revoke"], "revoke", "admin"],
  ["GET", ["v3", "jobs", ":jobUid"], "run", "read"],
  ["DELETE", ["v3", "jobs", ":jobUid"], "delete", "admin"],
  ["GET", ["v3", "jobs", ":jobUid", "results"], "results", "read"],
  ["POST", ["webhooks", "captaindata"], "webhook", "webhook"],
  ["GET", ["health"], "health", "admin"],
  // Captain Data v4 (worker/src/v4-routes.js): the callbacks check their own secret header.
  ["POST", ["v4", "actions", ":action", "async"], "v4-launch", "admin"],
  ["POST", ["v4", "callbacks"], "v4-callback", "callback"],
];

function matches(pattern, parts) {
  if (pattern.length !== parts.length) return null;
  const params = {};
  for (const [i, piece] of pattern.entries()) {
    if (piece.startsWith(":")) params[piece.slice(1)] = parts[i];
    else if (piece !== parts[i]) return null;
  }
  return params;
}

/**
 * @param {string} method
 * @param {string} pathname
 * @returns {{ name: string, access: string, jobUid?: string, workflowUid?: string } | { error: { status: number, message: string } }}
 */
export function route(method, pathname) {
  const parts = pathname.split("/").slice(1);
  const found = TABLE.map(([m, pattern, name, access]) => ({ m, name, access, params: matches(pattern, parts) })).filter((r) => r.params);
  if (found.length === 0) return { error: { status: 404, message: "Not found" } };
  const hit = found.find((r) => r.m === method);
  if (!hit) return { error: { status: 405, message: "Method not allowed" } };
  for (const value of Object.values(hit.params)) {
    if (!isRunId(value)) return { error: { status: 400, message: "Invalid id in path" } };
  }
  return { name: hit.name, access: hit.access, ...hit.params };
}
