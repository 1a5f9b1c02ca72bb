// On your app's server, never in a browser: the ADMIN_TOKEN stays here. Starts tracking a run
// and returns what the browser needs to read it through the worker.
/**
 * @param {string} workerUrl e.g. "https://captaindata-poller.<you>.workers.dev"
 * @param {string} adminToken the worker's ADMIN_TOKEN
 * @param {string} jobUid the Captain Data run
 * @returns {Promise<{ jobUid: string, baseUrl: string, readToken: string, expiresAt: string }>}
 */
export async function readAccess(workerUrl, adminToken, jobUid) {
  const response = await fetch(`${workerUrl}/v3/jobs/${encodeURIComponent(jobUid)}/track`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ expires_in: 3600 }), // the read token's life, in seconds
  });
  if (!response.ok) throw new Error(`track ${jobUid}: HTTP ${response.status}`);
  const { read_token, read_token_expires_at } = await response.json();
  return { jobUid, baseUrl: `${workerUrl}/v3`, readToken: read_token, expiresAt: read_token_expires_at };
}
