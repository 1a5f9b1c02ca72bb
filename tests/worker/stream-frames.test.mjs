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

test("a row larger than 1 MiB alone goes in a frame of its own", () => {
  const big = row(1, "😀", MAX_FRAME_BYTES + 10);
  const frames = rowFrames(0, [row(0, "a", 10), big, row(2, "a", 10)]);
  assert.equal(frames.length, 3);
  assert.deepEqual(JSON.parse(frames[1]).rows, [JSON.parse(big)]);
});
