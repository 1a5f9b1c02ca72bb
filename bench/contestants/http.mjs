// What the hand-written contestants share: the two API reads over the global fetch, with
// the credentials in headers only, and the run statuses of DESIGN §1.

export const SUCCEEDED = new Set(["finished", "warning"]);
export const FAILED = new Set(["shutdown", "stopped"]);

/** A non-2xx answer; `retryable` for 429/5xx as DESIGN §1 says. */
export class HttpError extends Error {
  constructor(status, retryAfter) {
    super(`HTTP ${status}`);
    this.status = status;
    this.retryAfter = retryAfter;
    this.retryable = status === 429 || status >= 500;
  }
}

/** GET a JSON body. Network errors and malformed JSON reject as they come (retryable). */
export async function getJson(url, { apiKey, projectId, signal }) {
  const response = await fetch(url, {
    headers: { authorization: `x-api-key ${apiKey}`, "x-project-id": projectId },
    signal,
  });
  if (!response.ok) {
    await response.arrayBuffer(); // let the connection be reused
    throw new HttpError(response.status, response.headers.get("retry-after"));
  }
  return response.json();
}

export const runUrl = (baseUrl, jobUid) => `${baseUrl}/jobs/${encodeURIComponent(jobUid)}`;
export const resultsUrl = (baseUrl, jobUid) => `${runUrl(baseUrl, jobUid)}/results`;

/** Resolves after `ms`, or rejects at once when `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(id);
      reject(signal.reason);
    };
    const id = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
