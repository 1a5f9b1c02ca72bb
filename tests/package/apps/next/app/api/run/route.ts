// A whole run read in one request by a JobPoller: the rows in the order they came, and the summary.
import { JobPoller } from "captaindata-poller";
import type { NextRequest } from "next/server";

export async function GET(request: NextRequest) {
  const ids: string[] = [];
  const poller = new JobPoller<{ id: string }>({
    baseUrl: process.env.CAPTAINDATA_BASE_URL,
    apiKey: process.env.CAPTAINDATA_API_KEY,
    projectId: process.env.CAPTAINDATA_PROJECT_ID,
    jobUid: request.nextUrl.searchParams.get("job") ?? "",
    intervalMs: 50,
    onBatch: (batch) => void ids.push(...batch.results.map((row) => row.id)),
  });
  const { status, totalResults } = await poller.start();
  return Response.json({ ids, status, totalResults });
}
