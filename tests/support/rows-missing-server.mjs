// A small HTTP server that serves the worker's contract for a run that ended with rows known
// missing (issue 37): GET /v3/jobs/{uid} (v3 shape) says "running" while the rows come, one
// page more at each status read, then `status: "shutdown"`, `error_code` ROWS_MISSING (or
// ROWS_CAP_REACHED) and `rows_missing: { batches, batch_count, count, run_status }`;
// GET /v3/jobs/{uid}/results?page=N serves the rows stored, in fixed pages.
import { createServer } from "node:http";

export const JOB_UID = "run_rows_missing_1";

/**
 * Starts the server on 127.0.0.1: `{ baseUrl, close(), reads, rows, http, rowsMissing }`. `rows` are stored, revealed a
 * page per status read; `missing` is the `rows_missing` served at the end (`null`: a run that
 * ended in shutdown without it, as before issue 37).
 */
export async function startRowsMissingServer({ rows = 30, pageSize = 10, code = "ROWS_MISSING", missing } = {}) {
  const all = Array.from({ length: rows }, (_, i) => ({ id: `row-${i}`, n: i }));
  let available = 0;
  const reads = { run: 0, results: 0 };
  const rowsMissing =
    missing === undefined ? { batches: ["b-7", "b-8", "b-9", "b\x1b[31m-10\x07", "b-11", "b-12", "b-13"], batch_count: 7, count: 70, run_status: "SUCCEEDED" } : missing;
  const ended = () => available >= all.length;
  const message = `The run ended with rows missing: batches ${rowsMissing?.batches?.join(", ")} were never stored (${code}).`;
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const base = `http://127.0.0.1:${server.address().port}/v3/jobs/${JOB_UID}`;
    if (url.pathname === `/v3/jobs/${JOB_UID}`) {
      reads.run += 1;
      const over = ended();
      const body = {
        uid: JOB_UID,
        name: "rows missing",
        workflow_uid: null,
        status: over ? "shutdown" : "running",
        row_count: available,
        total_row_count: available,
        number_inputs: null,
        error_message: over ? message : null,
        error_code: over ? code : null,
        start_time: "2026-12-06T12:00:00.000Z",
        finish_time: over ? "2026-12-06T12:01:00.000Z" : null,
      };
      if (over) body.rows_missing = rowsMissing;
      available = Math.min(all.length, available + pageSize);
      return send(200, body);
    }
    if (url.pathname === `/v3/jobs/${JOB_UID}/results`) {
      reads.results += 1;
      const page = Number(url.searchParams.get("page") ?? "1");
      const results = all.slice((page - 1) * pageSize, Math.min(available, page * pageSize));
      const hasNext = available > page * pageSize;
      return send(200, { results, paging: { have_next_page: hasNext, next: hasNext ? `${base}/results?page=${page + 1}` : null } });
    }
    send(404, { message: "Not found" });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v3`,
    reads,
    rows: all,
    http: server, // a test may attach the worker's stream (a WebSocket server) to it
    rowsMissing,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
