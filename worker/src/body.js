// Request bodies read with a byte limit. Whatever the size, the body is read to its end before
// the answer goes out: a server that answers and closes while the client is still sending resets
// the connection, and the client sees ECONNRESET ("fetch failed") instead of the 413.

// Cloudflare refuses larger requests itself (100 MB on the smallest plans): past this, stop reading.
const DRAIN_LIMIT = 100 * 1024 * 1024;

/**
 * Reads `request`'s body (if it has one that is not read yet). Keeps at most `limit` bytes; the
 * rest is read and dropped.
 * @returns {Promise<{ bytes: Uint8Array, tooLarge: boolean }>}
 */
export async function readBody(request, limit) {
  const empty = { bytes: new Uint8Array(0), tooLarge: false };
  if (request.body === null || request.bodyUsed) return empty;
  const declared = Number(request.headers.get("content-length"));
  let tooLarge = declared > limit;
  const chunks = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) tooLarge = true;
    if (!tooLarge) chunks.push(value);
    if (size > DRAIN_LIMIT) {
      await reader.cancel();
      break;
    }
  }
  if (tooLarge) return { bytes: new Uint8Array(0), tooLarge };
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, tooLarge };
}
