// Who may do what: per-run read tokens (signed, with an expiry and the run's token epoch),
// shared secrets compared in constant time, webhook signatures, CORS limited to configured origins.

const encoder = new TextEncoder();
const READ_TOKEN_CONTEXT = "captaindata-poller read token v2:";
// `v2.<expiry, unix seconds>.<the run's token epoch>.<signature>`: every part is signed.
const READ_TOKEN = /^v2\.(\d{1,12})\.([A-Za-z0-9_-]{16,64})\.([A-Za-z0-9_-]{43})$/;

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

/**
 * A new per-launch v4 callback secret: 32 random bytes, base64url (43 characters). Given to
 * Captain Data in the launch's callback header only; the run stores its digest (`secretDigest`).
 */
export function newCallbackSecret() {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The SHA-256 of a secret, hex: what is stored in its place, so a storage dump does not hold it. */
export async function secretDigest(value) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether a presented secret matches a stored digest, compared in constant time (every byte of both digests). */
export async function matchesDigest(presented, storedDigest) {
  if (typeof presented !== "string" || presented === "" || typeof storedDigest !== "string" || storedDigest.length !== 64) return false;
  const actual = await secretDigest(presented);
  let diff = 0;
  for (let i = 0; i < 64; i++) diff |= actual.charCodeAt(i) ^ storedDigest.charCodeAt(i);
  return diff === 0;
}

/** A new random token epoch for a run: revoking its tokens is replacing it. */
export function newTokenEpoch() {
  return base64url(crypto.getRandomValues(new Uint8Array(16)));
}

const signed = (jobUid, expires, epoch) => encoder.encode(`${READ_TOKEN_CONTEXT}${jobUid}.${expires}.${epoch}`);

/**
 * The read token of a run: it opens that run only, until `expiresAt` (ms; kept in whole
 * seconds), and only while the run's token epoch is `epoch`.
 */
export async function readToken(secretValue, jobUid, { epoch, expiresAt }) {
  const expires = Math.floor(expiresAt / 1000);
  const key = await hmacKey(secretValue, ["sign"]);
  return `v2.${expires}.${epoch}.${base64url(await crypto.subtle.sign("HMAC", key, signed(jobUid, expires, epoch)))}`;
}

/**
 * The claims of `token` when it is a read token of `jobUid` that has not expired at `nowMs`
 * (`verify` compares the signature in constant time), else null. The epoch is checked by the
 * run's RunTracker, which holds it.
 * @returns {Promise<{ epoch: string, expiresAt: number } | null>}
 */
export async function readTokenClaims(secretValue, jobUid, token, nowMs) {
  const parts = typeof token === "string" ? READ_TOKEN.exec(token) : null;
  const signature = parts && fromBase64url(parts[3]);
  if (!signature) return null;
  const [, expires, epoch] = parts;
  const key = await hmacKey(secretValue, ["verify"]);
  if (!(await crypto.subtle.verify("HMAC", key, signature, signed(jobUid, expires, epoch)))) return null;
  const expiresAt = Number(expires) * 1000;
  return expiresAt > nowMs ? { epoch, expiresAt } : null;
}

/**
 * Whether `signature` (hex, optionally `sha256=`-prefixed) is HMAC-SHA-256(secret, body):
 * `verify` compares in constant time.
 */
export async function checkSignature(secretValue, bytes, signature) {
  const hex = /^(?:sha256=)?([0-9a-fA-F]{64})$/.exec(typeof signature === "string" ? signature.trim() : "")?.[1];
  if (!hex) return false;
  const mac = Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
  const key = await hmacKey(secretValue, ["verify"]);
  return crypto.subtle.verify("HMAC", key, mac, bytes);
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

/**
 * The 403 of a read the token does not open (another run's token, an expired or revoked one, none
 * at all): the same for a run that exists and one that does not, so it tells nothing of which.
 */
export const TOKEN_REFUSED = "The read token does not open this run (a token opens one run only, until it expires or is revoked)";
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
