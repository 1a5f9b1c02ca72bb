// Seeded randomness: the simulator never calls Math.random or crypto, so a run
// with the same seed, clock and request sequence gives the same answers.

/**
 * FNV-1a 32-bit hash of a string, to derive per-job seeds from a job uid.
 * @param {string} text
 * @returns {number}
 */
export function hashString(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * mulberry32: a small, fast PRNG with 32-bit state; good enough for fault dice.
 * @param {number} seed
 * @returns {() => number} uniform numbers in [0, 1)
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A uuid-shaped identifier drawn from `random` (deterministic, not a real UUIDv4).
 * @param {() => number} random
 * @returns {string}
 */
export function seededUid(random) {
  const hex = () => Math.floor(random() * 16).toString(16);
  const part = (n) => Array.from({ length: n }, hex).join("");
  return `${part(8)}-${part(4)}-4${part(3)}-a${part(3)}-${part(12)}`;
}
