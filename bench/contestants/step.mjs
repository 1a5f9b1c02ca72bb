// Contestant 1c: the package's `pollStep`, as a cron worker runs it: one bounded round per
// tick, the cursor carried from round to round, `process.cpuUsage` around each round (the
// Worker CPU a tick costs). Its summary carries the CPU of every round.
import { sleep } from "./http.mjs";
import { loadPackage } from "./package.mjs";

const { pollStep } = await loadPackage();

export function createStep(options) {
  const { baseUrl, apiKey, projectId, jobUid, intervalMs, retry, deadlineMs, onBatch, onStatus } = options;
  const stopper = new AbortController();

  async function start() {
    let cursor;
    let offset = 0;
    let requests = 0;
    let status = null;
    const roundCpuMicros = [];
    for (;;) {
      const before = process.cpuUsage();
      const step = await pollStep({ baseUrl, apiKey, projectId, jobUid, retry, deadlineMs, cursor });
      const spent = process.cpuUsage(before);
      roundCpuMicros.push(spent.user + spent.system);
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
        return { status, totalResults: offset, requests, rounds: roundCpuMicros.length, roundCpuMicros };
      }
      await sleep(intervalMs, stopper.signal);
    }
  }

  return { start, stop: () => stopper.abort(new Error("stopped")) };
}
