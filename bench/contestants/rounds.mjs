// What the two `pollStep` contestants share (1c in Node, 1d in workerd): rounds an interval
// apart with the cursor carried from one to the next, as a cron Worker runs them, and the
// calibration's repeated measurements.
import { sleep } from "./http.mjs";

/**
 * Runs `round(cursor)` until a round is done, sleeping `intervalMs` between rounds. A round
 * resolves with `{ step, cpuMicros, threadMicros?, bareMicros?, bareThreadMicros? }`, `step`
 * shaped like `pollStep`'s result, `bareMicros` the CPU of its requests replayed bare
 * (`bareThreadMicros` its main thread's).
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
  for (;;) {
    const { step, cpuMicros, threadMicros, bareMicros, bareThreadMicros } = await round(cursor);
    roundCpuMicros.push(cpuMicros);
    if (threadMicros !== undefined) roundThreadMicros.push(threadMicros);
    if (bareMicros !== undefined) roundBareMicros.push(bareMicros);
    if (bareThreadMicros !== undefined) roundBareThreadMicros.push(bareThreadMicros);
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
    if (step.done) {
      if (step.error) throw step.error;
      return { status, totalResults: offset, requests, rounds: roundCpuMicros.length, roundCpuMicros, roundThreadMicros, roundRequests, roundBareMicros, roundBareThreadMicros };
    }
    await sleep(intervalMs, signal);
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
