// Who may do what: per-run read tokens (HMAC of the run id), shared secrets compared in
// constant time, CORS limited to configured origins.

const encoder = new TextEncoder();
const READ_TOKEN_CONTEXT = "captaindata-poller read token v1:";

function hmacKey(secretValue, usages) {
  return crypto.subtle.importKey("raw", encoder.encode(secretValue), { name: "HMAC", hash: "SHA-256" }, false, usages);
}

function base64url(bytes) {
  let binary = "";
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text) {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(text)) return null;
  let binary;
  try {
    binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return null; // e.g. a length ≡ 1 (mod 4): not base64 at all, so not a token
  }
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** The read token of a run: base64url(HMAC-SHA-256(secret, context + jobUid)). */
export async function readToken(secretValue, jobUid) {
  const key = await hmacKey(secretValue, ["sign"]);
  return base64url(await crypto.subtle.sign("HMAC", key, encoder.encode(READ_TOKEN_CONTEXT + jobUid)));
}

/** True when `token` is the read token of `jobUid`; `verify` compares in constant time. */
export async function checkReadToken(secretValue, jobUid, token) {
  const signature = typeof token === "string" ? fromBase64url(token) : null;
  if (!signature) return false;
  const key = await hmacKey(secretValue, ["verify"]);
  return crypto.subtle.verify("HMAC", key, signature, encoder.encode(READ_TOKEN_CONTEXT + jobUid));
}

/**
 * Compares a presented secret with the expected one in time independent of where they differ
 * and of their lengths: both are hashed first, then every byte of the digests is compared.
 */
export async function sameSecret(presented, expected) {
  if (typeof presented !== "string" || typeof expected !== "string" || expected === "") return false;
  const [a, b] = await Promise.all([presented, expected].map((s) => crypto.subtle.digest("SHA-256", encoder.encode(s))));
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

/** The bearer token of an `Authorization: Bearer …` header, or null. */
export function bearer(request) {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "");
  return match ? match[1] : null;
}

export const READ_TOKEN_HEADER = "x-read-token";
const ALLOWED_HEADERS = `${READ_TOKEN_HEADER}, content-type`;

/**
 * CORS for browser reads. Returns `{ allowed, headers }`: a request without `Origin` (a
 * server, Node) is allowed without CORS headers; a browser origin must be configured.
 */
export function cors(request, allowedOrigins) {
  const origin = request.headers.get("origin");
  if (origin === null) return { allowed: true, headers: {} };
  if (!allowedOrigins.has(origin)) return { allowed: false, headers: { vary: "origin" } };
  return { allowed: true, headers: { "access-control-allow-origin": origin, vary: "origin" } };
}

/** The answer to a preflight from an allowed origin: GETs with the read-token header. */
export function preflightHeaders() {
  return {
    "access-control-allow-methods": "GET, OPTIONS",
    "access-control-allow-headers": ALLOWED_HEADERS,
    "access-control-max-age": "600",
  };
}
