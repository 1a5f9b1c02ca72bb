import { JobPoller } from "captaindata-poller";

const poller = new JobPoller({
  jobUid: "4c3f7d1e-…", // the run to poll: its `job_uid`
  apiKey: process.env.CAPTAINDATA_API_KEY,
  projectId: process.env.CAPTAINDATA_PROJECT_ID,
  onBatch: ({ results, offset }) => console.log(`rows ${offset + 1}–${offset + results.length}`, results),
});
const summary = await poller.start(); // { status, totalResults, requests, durationMs, … }
console.log(`${summary.status}: ${summary.totalResults} rows in ${summary.requests} requests`);
