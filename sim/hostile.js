// Hostile answers of the results endpoint (job spec `hostile`): what a broken or malicious
// server could send, to show what the poller does with it. Each replaces the answer of every
// results page from `hostileFrom` (0-based) on, retries included.

export const HOSTILE_KINDS = ["huge", "deep", "notArray", "html", "foreignNext", "unusableNext"];
const DEEP_MARK = "\u0000deep\u0000";

/**
 * @param {string} kind one of HOSTILE_KINDS
 * @param {{ results: unknown[], paging: object }} body the normal answer
 * @param {{ bytes: number, depth: number, jobUid: string }} size `bytes` of padding ("huge"), nesting `depth` ("deep")
 * @returns {{ status: number, text: string, headers: Record<string, string> }}
 */
export function hostileAnswer(kind, body, { bytes, depth, jobUid }) {
  const { results, paging } = body;
  const json = (value) => ({ status: 200, text: JSON.stringify(value), headers: {} });
  switch (kind) {
    case "huge": {
      // Valid rows, each padded so that the page weighs `bytes`.
      const per = Math.ceil(bytes / Math.max(1, results.length));
      const padding = "x".repeat(per);
      if (results.length === 0) return json({ results, paging, padding });
      return json({ results: results.map((row) => ({ ...row, padding })), paging });
    }
    case "deep": {
      // A `depth`-deep array inside the first row (or beside the rows when there are none).
      const nested = "[".repeat(depth) + "]".repeat(depth);
      const shaped = results.length === 0 ? { results, paging, deep: DEEP_MARK } : { results: [{ ...results[0], deep: DEEP_MARK }, ...results.slice(1)], paging };
      return { status: 200, text: JSON.stringify(shaped).replace(JSON.stringify(DEEP_MARK), nested), headers: {} };
    }
    case "notArray":
      return json({ results: Object.fromEntries(results.map((row, i) => [String(i), row])), paging });
    case "html":
      return {
        status: 200,
        text: "<!doctype html><html><body><h1>Service temporarily unavailable</h1></body></html>",
        headers: { "content-type": "text/html; charset=utf-8" },
      };
    case "foreignNext":
      return json({ results, paging: { have_next_page: true, next: `https://evil.example/v3/jobs/${jobUid}/results?page=2` } });
    case "unusableNext":
      return json({ results, paging: { have_next_page: true, next: null } });
    default:
      throw new TypeError(`Unknown hostile answer ${kind}`);
  }
}
