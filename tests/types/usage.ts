// Type test (DESIGN §3): compiled with `tsc --noEmit -p tests/types`, never run.
// It imports the package by name, so it checks the "types" export a user gets, and it
// touches every option, callback and result. `@ts-expect-error` lines must stay errors:
// they prove the types reject what the runtime rejects.
import {
  CaptainDataError,
  ERROR_CODES,
  FINAL_ERROR_CODES,
  isFinalError,
  JobPoller,
  pollStep,
  preload,
  scheduleWorkflow,
} from "captaindata-poller";
import type { Batch as RowBatch, MissingRows, MissingRowsCode, Retrying, Summary as SummaryType } from "captaindata-poller";

type Options = ConstructorParameters<typeof JobPoller>[0];
type Batch = Parameters<NonNullable<Options["onBatch"]>>[0];
type Run = Parameters<NonNullable<Options["onStatus"]>>[0];
type Summary = Parameters<NonNullable<Options["onComplete"]>>[0];
type PollError = Parameters<NonNullable<Options["onError"]>>[0];
type ErrorCode = PollError["code"];

declare const table: { append(rows: readonly unknown[]): void };
declare const savedCursor: string | undefined;
const controller = new AbortController();

// Every documented error code is a member of the code type…
const codes: ErrorCode[] = [
  "ALL_INPUTS_FAILED",
  "JOB_FAILED",
  "UNAUTHORIZED",
  "NOT_FOUND",
  "TIMEOUT",
  "BUDGET_EXHAUSTED",
  "RETRIES_EXHAUSTED",
  "BAD_RESPONSE",
  "ABORTED",
  "RATE_LIMITED",
  "SERVER_ERROR",
  "NETWORK_ERROR",
  "LOAD_FAILED",
  "CALLBACK_FAILED",
  "TOO_MANY_VIEWERS",
  "ROWS_MISSING",
  "ROWS_CAP_REACHED",
];
const finalCodes: readonly ErrorCode[] = FINAL_ERROR_CODES;
const listed: readonly ErrorCode[] = ERROR_CODES;
const isFinal: boolean = isFinalError(new Error("not a CaptainDataError"));
// …and the type is a union of codes, not any string, so a typo is caught.
// @ts-expect-error not an error code
const typo: ErrorCode = "ALL_INPUT_FAILED";

const options: Options = {
  jobUid: "job_123",
  apiKey: "key",
  projectId: "project_1",
  baseUrl: "https://proxy.example.com/v3",
  headers: { "x-proxy-token": "t" },
  intervalMs: 10_000,
  hiddenIntervalMs: Infinity,
  statusEvery: 5,
  maxDurationMs: 21_600_000,
  maxRequests: 500,
  timeoutMs: 30_000,
  retry: { retries: 5, minDelayMs: 1_000, maxDelayMs: 60_000 },
  cursor: savedCursor,
  signal: controller.signal,
  fetch: (input, init) => fetch(input, init),
  rowKey: "linkedin_profile_url",
  seed: 42,
  async onBatch(batch) {
    const rows: readonly unknown[] = batch.results;
    const offset: number = batch.offset;
    const cursor: string = batch.cursor;
    table.append(rows);
    localStorage.setItem(`cursor:${offset}`, cursor);
  },
  onStatus(run) {
    const status: string = run.status;
    const counts: (number | null | undefined)[] = [run.rowCount, run.totalRowCount, run.numberInputs];
    console.log(status, counts);
    // A retry under way: narrowed by the null check, its error's code and optional HTTP status.
    const retrying: Retrying | null = run.retrying;
    if (retrying) {
      const shown = `retrying (${retrying.attempt}/${retrying.retries}) in ${retrying.delayMs} ms: ${retrying.error.message}`;
      const code: ErrorCode = retrying.error.code;
      const http: number | undefined = retrying.error.status;
      console.log(shown, code, http);
    }
  },
  onComplete(summary) {
    const fields: [string, number, number, number] = [
      summary.status,
      summary.totalResults,
      summary.requests,
      summary.durationMs,
    ];
    console.log(fields);
  },
  onError(error) {
    const asError: Error = error;
    const code: ErrorCode = error.code;
    console.log(asError.name, asError.message, code);
  },
  // A callback that throws is reported here (the poll goes on); `name` says which one.
  onCallbackError(error, name) {
    const which: string = name;
    console.log(which, error);
  },
  shareAcrossTabs: true,
  onRoleChange({ role, tabs }) {
    const shown: string = `${role} · ${tabs} tabs`;
    console.log(shown);
  },
};

// @ts-expect-error jobUid is required
const noJob: Options = { apiKey: "key" };
// @ts-expect-error intervalMs is a number
const badInterval: Options = { jobUid: "j", intervalMs: "10s" };
// @ts-expect-error callbacks are functions
const badCallback: Options = { jobUid: "j", onBatch: "append" };
// @ts-expect-error shareAcrossTabs is a boolean
const badShare: Options = { jobUid: "j", shareAcrossTabs: "yes" };

// Rows pushed by the worker's stream: a transport, and a WebSocket constructor (the browser's here).
const pushed = new JobPoller({ jobUid: "j", baseUrl: "http://127.0.0.1:8787/v3", transport: "push", WebSocket });
// @ts-expect-error transport is "poll", "push" or "auto"
const badTransport: Options = { jobUid: "j", transport: "socket" };

// A proxy adds the credentials: jobUid alone is a valid configuration.
const minimal = new JobPoller({ jobUid: "job_123", baseUrl: "http://127.0.0.1:8787/v3" });

async function usePoller(): Promise<void> {
  const poller = new JobPoller(options);
  const running: Promise<Summary> = poller.start();
  const cursor: string | undefined = poller.cursor;
  const role: "leader" | "follower" | "alone" = poller.role;
  // @ts-expect-error not a role
  const notRole: typeof poller.role = "observer";
  poller.webhookReceived({
    uid: "w1",
    job_uid: "job_123",
    message: "Job successfully finished.",
    project_uid: "project_1",
    error: false,
    workflow_uid: "wf_1",
    workflow_name: "Extract",
    job_name: "run 1",
  });
  for await (const batch of poller) {
    const same: Batch = batch;
    console.log(same.results.length);
  }
  const stopped: void = poller.stop();
  const summary = await running;
  const total: number = summary.totalResults;
  // An end with rows known missing: `status` narrows the summary to one with `missing`.
  if (summary.status === "incomplete") {
    const missing: MissingRows = summary.missing;
    const why: MissingRowsCode = missing.code;
    const batches: readonly string[] = missing.batches;
    const counts: [number, number | null] = [missing.batchCount, missing.count];
    console.log(why, batches, counts);
  } else {
    // @ts-expect-error only an incomplete summary has `missing`
    const none: MissingRows = summary.missing;
    console.log(none);
  }
  console.log(cursor, role, notRole, stopped, total, minimal, pushed);
}

async function useCron(): Promise<void> {
  const connection = { apiKey: "key", projectId: "project_1", baseUrl: "https://api.captaindata.co/v3" };
  const { jobUid } = await scheduleWorkflow(connection, "workflow_1", { job_name: "nightly", inputs: [] });
  const uid: string = jobUid;
  const step = await pollStep({ ...connection, jobUid: uid, cursor: savedCursor, maxRequests: 40, deadlineMs: 25_000 });
  const rows: readonly unknown[] = step.results;
  const next: string = step.cursor;
  const status: string = step.status;
  const done: boolean = step.done;
  const failure: PollError | undefined = step.error;
  const lacking: MissingRows | undefined = step.missing;
  console.log(rows, next, status, done, failure?.code, lacking?.batches);
}

// Rows typed by the user: onBatch, the iterator and pollStep carry them.
interface Profile {
  linkedin_profile_url: string;
  full_name?: string;
}
async function useTypedRows(): Promise<void> {
  const loaded: Promise<void> = preload();
  await loaded;
  const poller = new JobPoller<Profile>({
    jobUid: "job_123",
    onBatch(batch) {
      const urls: string[] = batch.results.map((row) => row.linkedin_profile_url);
      // @ts-expect-error not a field of Profile
      console.log(urls, batch.results[0]?.company);
    },
  });
  for await (const batch of poller) {
    const typed: RowBatch<Profile> = batch;
    const first: Profile | undefined = typed.results[0];
    console.log(first?.full_name);
  }
  // Without a type argument, a row is a record of unknowns, not `any`.
  const untyped = new JobPoller({ jobUid: "job_123" });
  for await (const batch of untyped) {
    // @ts-expect-error unknown is not a string
    const name: string = batch.results[0]?.full_name;
    console.log(name);
  }
  const step = await pollStep<Profile>({ jobUid: "job_123" });
  const url: string | undefined = step.results[0]?.linkedin_profile_url;
  try {
    const summary: SummaryType = await poller.start();
    const stopped: boolean = summary.status === "stopped";
    console.log(url, stopped);
  } catch (error) {
    // A runtime class: instanceof narrows to it.
    if (error instanceof CaptainDataError) {
      const code: ErrorCode = error.code;
      const cause: unknown = error.cause;
      const status: number | undefined = error.status;
      const runStatus: string | undefined = error.runStatus;
      console.log(code, cause, status, runStatus, isFinalError(error));
    }
  }
  const made = new CaptainDataError("LOAD_FAILED", "could not load");
  const isError: Error = made;
  console.log(isError);
}

const run: Run | undefined = undefined;
export { codes, finalCodes, listed, isFinal, typo, noJob, badInterval, badCallback, badShare, usePoller, useCron, useTypedRows, run };
