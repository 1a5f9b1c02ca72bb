// The Worker the workerd contestant runs (bench/contestants/step-workerd.mjs): one `pollStep`
// round per POST /step, as a cron Worker's scheduled handler runs it, answering only what the
// bench records (row indexes, the cursor, the ending), so serialising rows is not counted as
// the round's work. The contestant measures three more requests the same way: POST /bare, a bare
// `fetch` + `json()` of a URL, POST /nothing, what carrying a request into workerd costs, and
// POST /alone, a status round of the package with no HTTP (its `fetch` answers at once).
import { pollStep } from "../../../dist/workerd.js";

/** A `fetch` answering a parsed pending status of `jobUid` at once: no HTTP, no JSON text. */
function answerPending(jobUid) {
  const headers = new Headers();
  const body = { uid: jobUid, status: "pending", row_count: 0, total_row_count: 0, error_message: null };
  return () => Promise.resolve({ status: 200, headers, json: () => Promise.resolve(body) });
}

// The requests of the last POST /step round, which POST /replay makes again bare.
let lastSent = [];

/**
 * A `fetch` that records each request's URL and headers as given, then sends it: the replay
 * builds its `Headers` from them, as the round's `fetch` does, so neither copies them twice.
 */
function recordingFetch(sent) {
  return (url, init = {}) => {
    sent.push({ url, headers: init.headers });
    return fetch(url, init);
  };
}

export default {
  async fetch(request, env) {
    const body = await request.json();
    const { pathname } = new URL(request.url);
    if (pathname === "/nothing") return Response.json({});
    if (pathname === "/bare") {
      const answer = await fetch(body.url, { headers: body.headers });
      const parsed = await answer.json();
      return Response.json({ ok: parsed !== null });
    }
    // POST /replay: the last round's requests again, bare (`fetch` + `json()`, the same
    // headers); the simulator counts none of them (its replay header). Answered as /step is:
    // the indexes of the rows read, so that the replay pays the answer's work as the round does.
    if (pathname === "/replay") {
      const rows = [];
      for (const { url, headers } of lastSent) {
        const replay = new Headers(headers);
        replay.set(body.replayHeader, "1");
        const parsed = await (await fetch(url, { headers: replay })).json();
        if (Array.isArray(parsed.results)) rows.push(...parsed.results);
      }
      return Response.json({ replayed: lastSent.length, indexes: rows.map((row) => row.index) });
    }
    const { jobUid, retry, deadlineMs, cursor } = body;
    // POST /alone: a status round whose `fetch` answers a parsed pending status at once.
    lastSent = [];
    const answering = pathname === "/alone" ? answerPending(jobUid) : recordingFetch(lastSent);
    const step = await pollStep({ baseUrl: env.BASE_URL, apiKey: env.API_KEY, projectId: env.PROJECT_ID, jobUid, retry, deadlineMs, cursor, fetch: answering });
    return Response.json({
      indexes: step.results.map((row) => row.index),
      cursor: step.cursor,
      status: step.status,
      done: step.done,
      requests: step.requests,
      error: step.error ? String(step.error.code) : null,
    });
  },
};
