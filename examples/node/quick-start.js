import { JobPoller } from "captaindata-poller";

const poller = new JobPoller({
  jobUid: "4c3f7d1e-9b2a-4e51-8d07-6a1f2c3b4d5e", // the run to poll: its `job_uid`
  apiKey: process.env.CAPTAINDATA_API_KEY,
  projectId: process.env.CAPTAINDATA_PROJECT_ID,
  onBatch: ({ results, offset }) => console.log(`rows ${offset + 1}–${offset + results.length}`, results),
});
const summary = await poller.start(); // { status, totalResults, requests, durationMs, … }
console.log(`${summary.status}: ${summary.totalResults} rows in ${summary.requests} requests`);
