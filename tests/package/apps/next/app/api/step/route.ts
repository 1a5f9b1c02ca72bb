// One bounded round per request, as a cron tick or a client's "more" would ask for it: the
// caller passes back the cursor it got.
import { pollStep } from "captaindata-poller";
import type { NextRequest } from "next/server";

const connection = () => ({
  baseUrl: process.env.CAPTAINDATA_BASE_URL,
  apiKey: process.env.CAPTAINDATA_API_KEY,
  projectId: process.env.CAPTAINDATA_PROJECT_ID,
});

export async function GET(request: NextRequest) {
  const params = request.nextUrl.searchParams;
  const step = await pollStep<{ id: string }>({ ...connection(), jobUid: params.get("job") ?? "", cursor: params.get("cursor") ?? undefined });
  const { results, cursor, status, done, error } = step;
  return Response.json({ ids: results.map((row) => row.id), cursor, status, done, error: error && { code: error.code, message: error.message } });
}
