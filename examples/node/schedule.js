import { readFile } from "node:fs/promises";
import { JobPoller, scheduleWorkflow } from "captaindata-poller";

const connection = { apiKey: process.env.CAPTAINDATA_API_KEY, projectId: process.env.CAPTAINDATA_PROJECT_ID };
// inputs.json: the run's inputs, e.g. [{ "linkedin_profile_url": "https://www.linkedin.com/in/…" }]
const inputs = JSON.parse(await readFile("inputs.json", "utf8"));

const { jobUid } = await scheduleWorkflow(connection, "b2f6c1a4-5d3e-4f70-9a81-0c2d3e4f5a6b", { job_name: "Leads", steps: [], inputs });
console.log(`scheduled ${jobUid}`);
const { totalResults } = await new JobPoller({ ...connection, jobUid }).start();
console.log(`${totalResults} rows`);
