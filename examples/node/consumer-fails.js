import { appendFile, readFile, writeFile } from "node:fs/promises";
import { CaptainDataError, JobPoller } from "captaindata-poller";

const jobUid = "4c3f7d1e-9b2a-4e51-8d07-6a1f2c3b4d5e";
const saved = await readFile("cursor.txt", "utf8").catch(() => undefined); // where the last run of this script stopped

const poller = new JobPoller({
  jobUid,
  apiKey: process.env.CAPTAINDATA_API_KEY,
  projectId: process.env.CAPTAINDATA_PROJECT_ID,
  cursor: saved,
  onBatch: ({ results }) => appendFile("rows.ndjson", results.map((row) => `${JSON.stringify(row)}\n`).join("")),
});
try {
  await poller.start();
} catch (error) {
  // A full disk, say: the poller stopped with its cursor before the batch that failed.
  if (!(error instanceof CaptainDataError && error.code === "CALLBACK_FAILED")) throw error;
  if (poller.cursor) await writeFile("cursor.txt", poller.cursor); // run this again to go on from there
  process.exitCode = 1;
}
