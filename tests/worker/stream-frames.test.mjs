// rowFrames' frames are at most MAX_FRAME_BYTES in UTF-8 bytes (what a WebSocket text frame
// carries), whatever the rows hold: non-BMP text (4 bytes a character, 2 UTF-16 units) included.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_FRAME_BYTES, rowFrames } from "../../worker/src/stream.js";

/** A row's JSON text of about `bytes` UTF-8 bytes of `char`. */
const row = (i, char, bytes) => JSON.stringify({ id: i, text: char.repeat(Math.ceil(bytes / Buffer.byteLength(char))) });

/** Every frame within the limit, the rows split in order and each once. */
function assertFrames(texts) {
  const frames = rowFrames(7, texts);
  assert.ok(frames.length > 1, "the rows are split across frames");
  for (const frame of frames) assert.ok(Buffer.byteLength(frame) <= MAX_FRAME_BYTES, `a frame of ${Buffer.byteLength(frame)} bytes`);
  let next = 7;
  for (const frame of frames) {
    const { offset, rows } = JSON.parse(frame);
    assert.equal(offset, next);
    next += rows.length;
  }
  assert.equal(next, 7 + texts.length);
  assert.deepEqual(frames.flatMap((f) => JSON.parse(f).rows), texts.map((t) => JSON.parse(t)));
}

test("rows of emoji (non-BMP, 4 bytes each) are framed within 1 MiB of UTF-8", () => {
  assertFrames(Array.from({ length: 40 }, (_, i) => row(i, "😀", 100_000)));
});

test("rows mixing ASCII, 2-, 3- and 4-byte characters are framed within 1 MiB", () => {
  const chars = ["a", "é", "€", "𝄞"];
  assertFrames(Array.from({ length: 60 }, (_, i) => row(i, chars[i % 4], 70_000 + i * 13)));
});

test("a row larger than 1 MiB goes in part frames of at most 1 MiB each, cut between characters, whole once joined", () => {
  // Non-BMP (a pair of UTF-16 units, 4 bytes), quotes and backslashes (escaped twice in a part), a lone surrogate.
  const text = "😀".repeat(400_000) + '"\\'.repeat(100_000) + "𝄞é€\ud800a".repeat(50_000);
  const big = JSON.stringify({ id: 1, text });
  assert.ok(Buffer.byteLength(big) > 2 * MAX_FRAME_BYTES);
  const frames = rowFrames(5, [row(0, "a", 10), big, row(2, "a", 10)]);
  const parsed = frames.map((f) => JSON.parse(f));
  for (const frame of frames) assert.ok(Buffer.byteLength(frame) <= MAX_FRAME_BYTES, `a frame of ${Buffer.byteLength(frame)} bytes`);
  assert.deepEqual(parsed.map((f) => f.type), ["rows", ...parsed.slice(1, -1).map(() => "part"), "rows"]);
  const parts = parsed.slice(1, -1);
  assert.ok(parts.length >= 3, `${parts.length} parts`);
  assert.ok(parts.every((p) => p.offset === 6));
  assert.deepEqual(parts.map((p) => p.last), [...parts.slice(1).map(() => false), true]);
  // No part ends inside a surrogate pair (a pair cut in two would be two lone halves).
  for (const p of parts) assert.ok(!/[\ud800-\udbff]$/.test(p.text), "a part ends inside a surrogate pair");
  assert.equal(parts.map((p) => p.text).join(""), big);
  assert.deepEqual(JSON.parse(parts.map((p) => p.text).join("")), JSON.parse(big));
  assert.equal(parsed.at(-1).offset, 7);
});
