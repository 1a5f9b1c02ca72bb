// What the two `pollStep` contestants share (1c in Node, 1d in workerd): rounds an interval
// apart with the cursor carried from one to the next, as a cron Worker runs them, and the
// calibration's repeated measurements.
import { sleep } from "./http.mjs";

/**
 * Runs `round(cursor)` until a round is done, sleeping `intervalMs` between rounds. A round
 * resolves with `{ step, cpuMicros, threadMicros?, replay? }`, `step` shaped like
 * `pollStep`'s result; `replay()` makes its requests again bare and resolves with their CPU,
 * `{ bareMicros, bareThreadMicros? }` (the main thread's). It is called half an interval
 * after the round, so that the replay, like the round, starts from an idle process: right
 * after the round it would find the caches and the HTTP client's state the round warmed.
 * Rows go to `onBatch`, status changes to `onStatus`; a terminal `step.error` rejects. The
 * summary holds each round's CPU and requests.
 */
export async function cronRounds({ round, intervalMs, signal, onBatch, onStatus }) {
  let cursor;
  let offset = 0;
  let requests = 0;
  let status = null;
  const roundCpuMicros = [];
  const roundThreadMicros = [];
  const roundRequests = [];
  const roundBareMicros = [];
  const roundBareThreadMicros = [];
  /** The bare replay of a round, half an interval after it; its CPU is kept beside the round's. */
  async function replayed(replay) {
    await sleep(intervalMs / 2, signal);
    const { bareMicros, bareThreadMicros } = await replay();
    roundBareMicros.push(bareMicros);
    if (bareThreadMicros !== undefined) roundBareThreadMicros.push(bareThreadMicros);
  }
  for (;;) {
    const { step, cpuMicros, threadMicros, replay } = await round(cursor);
    roundCpuMicros.push(cpuMicros);
    if (threadMicros !== undefined) roundThreadMicros.push(threadMicros);
    roundRequests.push(step.requests);
    requests += step.requests;
    cursor = step.cursor;
    if (step.results.length > 0) {
      await onBatch?.({ results: step.results, offset });
      offset += step.results.length;
    }
    if (step.status !== status) {
      status = step.status;
      onStatus?.({ status });
    }
    const pause = sleep(intervalMs, signal);
    pause.catch(() => {}); // a stop during the replay rejects it; awaited below otherwise
    if (replay) await replayed(replay);
    if (step.done) {
      if (step.error) throw step.error;
      return { status, totalResults: offset, requests, rounds: roundCpuMicros.length, roundCpuMicros, roundThreadMicros, roundRequests, roundBareMicros, roundBareThreadMicros };
    }
    await pause;
  }
}

/** `measure()` (µs) `times` times, `gapMs` apart. */
export async function measuredApart(measure, times, gapMs) {
  const spent = [];
  for (let i = 0; i < times; i++) {
    spent.push(await measure());
    await sleep(gapMs);
  }
  return spent;
}
