import { CaptainDataError, JobPoller } from "captaindata-poller";

interface Profile {
  linkedin_profile_url: string;
  full_name?: string;
}

const poller = new JobPoller<Profile>({
  jobUid: "4c3f7d1e-9b2a-4e51-8d07-6a1f2c3b4d5e",
  apiKey: process.env.CAPTAINDATA_API_KEY,
  projectId: process.env.CAPTAINDATA_PROJECT_ID,
  onBatch: ({ results }) => console.log(results.map((p) => p.full_name ?? p.linkedin_profile_url)),
});
await poller.start().catch((error: unknown) => {
  if (error instanceof CaptainDataError && error.code === "CALLBACK_FAILED") console.log(`resume from ${poller.cursor}`);
  else throw error;
});
