/**
 * A clock the test controls: time moves only when told to.
 * @param {number} [start=0] initial time in ms
 * @returns {{ now(): number, advance(ms: number): number, set(ms: number): void }}
 */
export function manualClock(start = 0) {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
      return t;
    },
    set(ms) {
      t = ms;
    },
  };
}

/** The wall clock, used when no clock is given. */
export const systemClock = { now: () => Date.now() };
