// Contestant 1: captaindata-poller itself, through the package's Node entry.
import { loadPackage } from "./package.mjs";

const { JobPoller } = await loadPackage();

/**
 * Default options except the time-valued ones the bench scales (interval, retry delays);
 * `statusEvery` only when a variant sets it (the bench's shared value equals the default).
 */
export function createLibrary(options) {
  const { baseUrl, apiKey, projectId, jobUid, intervalMs, retry, statusEvery, onBatch, onStatus } = options;
  const poller = new JobPoller({ baseUrl, apiKey, projectId, jobUid, intervalMs, retry, statusEvery, onBatch, onStatus });
  return { start: () => poller.start(), stop: () => poller.stop() };
}
