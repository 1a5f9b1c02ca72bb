// node watch.js <jobUid>: appends the run's rows to rows.ndjson as they arrive.
import { appendFile } from "node:fs/promises";
import { JobPoller } from "captaindata-poller";

const jobUid = process.argv[2];
if (!jobUid) throw new Error("usage: node watch.js <jobUid>");

const poller = new JobPoller({
  jobUid,
  apiKey: process.env.CAPTAINDATA_API_KEY,
  projectId: process.env.CAPTAINDATA_PROJECT_ID,
  async onBatch({ results }) {
    // The next poll waits for this promise (backpressure).
    await appendFile("rows.ndjson", results.map((row) => `${JSON.stringify(row)}\n`).join(""));
  },
});
const { totalResults } = await poller.start();
console.log(`${totalResults} rows in rows.ndjson`);
