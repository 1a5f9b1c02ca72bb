// Contestant 1: captaindata-poller itself, through the package's Node entry.
import { JobPoller } from "../../js/node.js";

/** Default options except the time-valued ones the bench scales (interval, retry delays). */
export function createLibrary(options) {
  const { baseUrl, apiKey, projectId, jobUid, intervalMs, retry, onBatch, onStatus } = options;
  const poller = new JobPoller({ baseUrl, apiKey, projectId, jobUid, intervalMs, retry, onBatch, onStatus });
  return { start: () => poller.start(), stop: () => poller.stop() };
}
