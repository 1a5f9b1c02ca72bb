// One bounded round per request, as a cron tick or a client's "more" would ask for it: the
// caller passes back the cursor it got.
import { json } from "@sveltejs/kit";
import { env } from "$env/dynamic/private";
import { pollStep } from "captaindata-poller";
import type { RequestHandler } from "./$types";

export const GET: RequestHandler = async ({ url }) => {
  const step = await pollStep<{ id: string }>({
    baseUrl: env.CAPTAINDATA_BASE_URL,
    apiKey: env.CAPTAINDATA_API_KEY,
    projectId: env.CAPTAINDATA_PROJECT_ID,
    jobUid: url.searchParams.get("job") ?? "",
    cursor: url.searchParams.get("cursor") ?? undefined,
  });
  const { results, cursor, status, done, error } = step;
  return json({ ids: results.map((row) => row.id), cursor, status, done, error: error && { code: error.code, message: error.message } });
};
