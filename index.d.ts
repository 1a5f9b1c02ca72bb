// Types of the npm package `captaindata-poller` (hand-written; wasm-bindgen runs with --no-typescript).

/** Every `code` a {@link CaptainDataError} can carry. */
export type ErrorCode =
  | "ALL_INPUTS_FAILED"
  | "JOB_FAILED"
  | "UNAUTHORIZED"
  | "NOT_FOUND"
  | "TIMEOUT"
  | "BUDGET_EXHAUSTED"
  | "RETRIES_EXHAUSTED"
  | "BAD_RESPONSE"
  | "ABORTED"
  | "RATE_LIMITED"
  | "SERVER_ERROR"
  | "NETWORK_ERROR"
  | "LOAD_FAILED"
  | "CALLBACK_FAILED"
  | "TOO_MANY_VIEWERS"
  | "ROWS_MISSING"
  | "ROWS_CAP_REACHED";

/**
 * Not errors: why a run that ended lacks rows (`summary.missing.code` of an `"incomplete"`
 * summary). `ROWS_MISSING`: rows the worker could not recover (lost callbacks whose replays were
 * lost too); `ROWS_CAP_REACHED`: the worker kept the rows up to its cap (`MAX_ROWS_PER_RUN`).
 */
export type MissingRowsCode = "ROWS_MISSING" | "ROWS_CAP_REACHED";

/** The list of every error code, frozen. */
export declare const ERROR_CODES: readonly ErrorCode[];

/**
 * The codes that polling again with the same options cannot change: `ALL_INPUTS_FAILED`,
 * `JOB_FAILED`, `UNAUTHORIZED`, `NOT_FOUND`. Any other error (a budget, a timeout, a transient
 * failure, a stop) may end differently next time: resume from the cursor.
 */
export declare const FINAL_ERROR_CODES: readonly ErrorCode[];

/** True when `error` carries one of {@link FINAL_ERROR_CODES}. */
export declare function isFinalError(error: unknown): boolean;

/**
 * A terminal error, a class exported by every entry (`err instanceof CaptainDataError` works):
 * `start()` rejects with it, `onError` receives it, `pollStep` returns it in `error`,
 * `scheduleWorkflow` rejects with it. A bad option is a `TypeError` instead.
 */
export declare class CaptainDataError extends Error {
  constructor(code: ErrorCode, message: string, options?: { status?: number; runStatus?: string; cause?: unknown });
  readonly name: "CaptainDataError";
  /** Stable, matchable kind. */
  readonly code: ErrorCode;
  /** The HTTP status that caused it, when there was one. */
  readonly status?: number;
  /** The last run status seen, when any. */
  readonly runStatus?: string;
  /**
   * The JS value behind it, when there is one: `signal.reason` (`ABORTED`); what `onBatch` or
   * the iterator's consumer threw (`CALLBACK_FAILED`); what `fetch` threw or rejected with on
   * the last request (a network error, a CORS refusal: `RETRIES_EXHAUSTED`, `NETWORK_ERROR`);
   * why the module did not load (`LOAD_FAILED`).
   */
  readonly cause?: unknown;
}

/**
 * Starts loading the WebAssembly module now (it otherwise loads on the first `start()`,
 * `pollStep` or `scheduleWorkflow`). Rejects with `LOAD_FAILED`; a later call tries again.
 * In Node and workerd the module loads synchronously on first use; this loads it now.
 */
export declare function preload(): Promise<void>;

/**
 * Run statuses of Captain Data v3, as the API reports them (`RunStatus.status`,
 * `CaptainDataError.runStatus`); an unknown one is passed through (and is not terminal).
 * `"stopped"` is the API's: the run was stopped in Captain Data, a failure (`start()` rejects
 * with `JOB_FAILED`, `error.runStatus` `"stopped"`). A poller stopped by its caller is another
 * thing: `start()` resolves with a {@link Summary} whose `status` is `"stopped"` (see
 * {@link SummaryStatus}).
 */
export type RunStatusValue =
  | "pending"
  | "running"
  | "paused"
  | "finished"
  | "warning"
  | "shutdown"
  | "stopped"
  | (string & {});

/** A result row as the API sends it; give `JobPoller<Row>` your own row type. */
export type DefaultRow = Record<string, unknown>;

/** New rows of the run, in order, each delivered once. Frozen. */
export interface Batch<Row = DefaultRow> {
  /** The new rows, as parsed from the API (never re-serialised). */
  readonly results: readonly Row[];
  /** Position of `results[0]` among all the run's results. */
  readonly offset: number;
  /** Resume token after this batch: save it once the rows are processed. */
  readonly cursor: string;
}

/**
 * What `onStatus` receives when the run's status or counts change (and on every read while it
 * is paused). Frozen. Fields the API did not send are `null`.
 */
export interface RunStatus {
  /** The run's `status` as the API spells it (`finished`/`warning`/`completed` are success; `shutdown`/`stopped` failure). */
  readonly status: RunStatusValue;
  /** `row_count`: outputs the API counts so far. It can lag the results: the poller never stops on it. */
  readonly rowCount: number | null;
  /** `total_row_count`, as the API reports it. */
  readonly totalRowCount: number | null;
  /** `number_inputs`: inputs of the run. */
  readonly numberInputs: number | null;
  /** `error_message`, when the API gives a non-empty one ("All Inputs Failed" ends the poll with `ALL_INPUTS_FAILED`). */
  readonly errorMessage: string | null;
  /** The run's `name`. */
  readonly name: string | null;
  /** The run's `uid` (the `jobUid`). */
  readonly uid: string | null;
  /** The workflow it is a run of (`workflow_uid`). */
  readonly workflowUid: string | null;
  /** `start_time`, as the API sends it. */
  readonly startTime: string | null;
  /** `finish_time`, as the API sends it (`null` while running). */
  readonly finishTime: string | null;
  /** While the run is `paused`: how long this poller has seen it paused, in ms (absent otherwise). */
  readonly pausedForMs?: number;
  /**
   * A retry of a failing request is under way (`null` when none): `onStatus` is called when one
   * is scheduled, and again with `null` at the next good answer. Before the first status read,
   * `status` is `"unknown"` and the other fields `null`. Show it as, say, "retrying (2/5): HTTP
   * 503" while the poller keeps going; after `retries` of them it ends with `RETRIES_EXHAUSTED`.
   */
  readonly retrying: Retrying | null;
}

/** A retry of a failing request, scheduled: what `RunStatus.retrying` holds. Frozen. */
export interface Retrying {
  /** 1 for the first retry of the failing request, then 2, … up to `retries`. */
  readonly attempt: number;
  /** The limit: `retry.retries`. */
  readonly retries: number;
  /** The wait before this retry, in ms (backoff with jitter, or the server's `Retry-After`). */
  readonly delayMs: number;
  /**
   * The failure being retried: `code` is `RATE_LIMITED` (429), `SERVER_ERROR` (5xx, 408),
   * `NETWORK_ERROR` (no response at all), `TIMEOUT` (no answer within `timeoutMs`) or
   * `BAD_RESPONSE` (a malformed body); `status` is the HTTP status when there was one. The
   * message holds no secret (no header, URL or body).
   */
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly status?: number };
}

/**
 * `Summary.status`, the ways `start()` resolves:
 * - the run succeeded: its final status as the API spells it, `"finished"`, `"warning"` or
 *   `"completed"` (`onComplete` is called);
 * - `"incomplete"`: the run ended with rows the server knows are missing (the worker's
 *   `rows_missing`): every row stored was delivered, then `onComplete` is called with an
 *   {@link IncompleteSummary} whose `missing` says what is lacking. Not a success, not an error
 *   (`onError` is not called, `start()` resolves): test `summary.status === "incomplete"`;
 * - `"stopped"`: the caller stopped this poller (`stop()`) before the run ended; no callback is
 *   called, and the run itself may still be going.
 *
 * The same word from the API, a run stopped in Captain Data, never resolves `start()`: it is a
 * failure, a `CaptainDataError` with `code` `JOB_FAILED` and `runStatus` `"stopped"`. So
 * `summary.status === "stopped"` always means the caller's stop.
 */
export type SummaryStatus = "finished" | "warning" | "completed" | "incomplete" | "stopped";

/** The figures of every {@link Summary}. Frozen. */
export interface SummaryFigures {
  /**
   * Rows delivered (their `onBatch` returned or its promise fulfilled), including those before
   * a resume from `cursor`. `0` for a poller stopped before the module loaded.
   */
  readonly totalResults: number;
  /**
   * Requests this poller sent. Tabs sharing a poller: those this tab sent (while it led, or
   * read rows it missed), the figure its `maxRequests` counts; `0` for a tab that only followed.
   */
  readonly requests: number;
  /** Retries this poller made (429, 5xx, timeouts, network errors, malformed bodies); sharing tabs: this tab's. */
  readonly retries: number;
  /** Time from `start()` to the end, in ms. */
  readonly durationMs: number;
  /** Resume token after the last delivered row (the given `cursor` if none was and the module never loaded). */
  readonly cursor: string | undefined;
}

/** What an {@link IncompleteSummary} lacks. Frozen. */
export interface MissingRows {
  /** Why: `ROWS_MISSING` (rows never recovered) or `ROWS_CAP_REACHED` (the worker's row cap). */
  readonly code: MissingRowsCode;
  /** The batches missing, as the server names them (it may list only the first ones: see `batchCount`). */
  readonly batches: readonly string[];
  /** How many batches are missing. */
  readonly batchCount: number;
  /** How many rows are missing, when the server knows (`null` otherwise). */
  readonly count: number | null;
}

/** A run that succeeded, or a poller stopped by its caller: no `missing`. */
export interface CompleteSummary extends SummaryFigures {
  /** The run's final status (`"finished"`, `"warning"` or `"completed"`, as the API spells it), or `"stopped"`: the caller's `stop()`, never the API's status (see {@link SummaryStatus}). */
  readonly status: Exclude<SummaryStatus, "incomplete">;
  readonly missing?: undefined;
}

/** A run that ended with rows known missing: every row stored was delivered; `missing` says what was not. */
export interface IncompleteSummary extends SummaryFigures {
  readonly status: "incomplete";
  readonly missing: MissingRows;
}

/**
 * What `start()` resolves with and `onComplete` receives (once, not after `stop()`), a union on
 * `status`: `summary.status === "incomplete"` narrows it to an {@link IncompleteSummary} (with
 * `missing`); after `stop()` its `status` is `"stopped"` and no callback is called. Frozen.
 */
export type Summary = CompleteSummary | IncompleteSummary;

/** This tab's part in a poller shared by the tabs of an origin (see `shareAcrossTabs`). */
export type PollerRole =
  /** This tab polls the API for every tab watching the run. */
  | "leader"
  /** Another tab polls; this one receives its rows, statuses and outcome (also before `start()` elects). */
  | "follower"
  /** Not shared: `shareAcrossTabs: false`, or a runtime without `navigator.locks`, `BroadcastChannel` or `crypto.subtle`. */
  | "alone";

/** What `onRoleChange` receives. Frozen. */
export interface TabSharing {
  readonly role: PollerRole;
  /** Tabs (of this origin) sharing this poller, this one included. */
  readonly tabs: number;
}

/** Backoff for 429, 5xx, timeouts, network errors and malformed bodies (full jitter). */
export interface RetryOptions {
  /** Consecutive failures of one request retried before `RETRIES_EXHAUSTED`. @default 5 */
  retries?: number;
  /** Smallest delay, and lower bound of a `Retry-After` hint. @default 1000 */
  minDelayMs?: number;
  /** Largest delay, and upper bound of a `Retry-After` hint. @default 60000 */
  maxDelayMs?: number;
}

/** A `fetch`-compatible function; called with `this` undefined. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** How to reach the API (or a proxy that adds the credentials). */
export interface Connection {
  /** Captain Data API key, sent only as `Authorization: x-api-key …`. Omit behind a proxy. */
  apiKey?: string;
  /** Project uid, sent as `x-project-id`. Omit behind a proxy. */
  projectId?: string;
  /** https (http only for localhost). @default "https://api.captaindata.co/v3" */
  baseUrl?: string;
  /** Extra request headers (e.g. a proxy token). */
  headers?: HeadersInit;
  /** Injected fetch (tests, proxies). @default globalThis.fetch */
  fetch?: FetchLike;
  /** Per-request timeout in ms. @default 30000 */
  timeoutMs?: number;
  /** Cancels everything; the error is `ABORTED` with `cause = signal.reason`. */
  signal?: AbortSignal;
}

/**
 * When the results are read while the run is going.
 * - `"status"`: each tick reads the run's status (small, with `row_count`) and the results only
 *   when the count is past the rows delivered, the run gives no count, six ticks in a row said
 *   nothing new (counts lag), or the run is over. While rows come on every tick, the results are
 *   read first, as with `"every-tick"`.
 * - `"every-tick"`: the results on every tick; the status every `statusEvery` reads and after a
 *   read that brought no new rows or fewer than the one before.
 */
export type ReadMode = "status" | "every-tick";

/**
 * Options of {@link JobPoller}. A bad one is a `TypeError` naming it: the callbacks are checked
 * by the constructor; the others by the constructor once the module is loaded (always in Node
 * and workerd, in a browser from the second poller on or after `preload()`), else by `start()`,
 * which then rejects with it.
 */
export interface JobPollerOptions<Row = DefaultRow> extends Connection {
  /** The run to poll. */
  jobUid: string;
  /**
   * Cadence in ms of the reads while the run is going: the pause after a tick's reads before the
   * next tick, lengthened by up to 5 % (never shortened). At least 1000 unless `baseUrl` is on
   * localhost, 127.0.0.1 or [::1] (a simulator).
   * @default 10000
   */
  intervalMs?: number;
  /**
   * While the page is hidden, results are polled no faster than this; `Infinity` pauses
   * polling until the page is visible again, which polls at once. Offline (`navigator.onLine`
   * false), nothing is sent and no retry is spent; back online, the poller polls at once.
   * @default 60000
   */
  hiddenIntervalMs?: number;
  /** Read a page only when the run's status says it changed (`"status"`), or on every tick. @default "status" */
  readMode?: ReadMode;
  /** When the results are read on every tick (`readMode: "every-tick"`, or while rows come on every tick): read the run status once every N results polls, and early after a poll that brought no new rows or fewer than the poll before (a run that is ending). @default 5 */
  statusEvery?: number;
  /** Give up with `TIMEOUT` after this long. @default 21600000 (6 h) */
  maxDurationMs?: number;
  /** Give up with `BUDGET_EXHAUSTED` instead of sending more requests. @default unlimited */
  maxRequests?: number;
  /** Retry policy. */
  retry?: RetryOptions;
  /** Resume token from `poller.cursor`, `batch.cursor` or a step: no row is delivered twice. */
  cursor?: string;
  /** Row field that identifies a row; lets the poller drop rows a server repeats across pages. */
  rowKey?: string;
  /** Seed of the backoff and cadence jitter (deterministic tests). @default a random seed per poller */
  seed?: number;
  /**
   * New rows, in order. May return a promise: the next poll waits for it (backpressure). If it
   * throws or its promise rejects, the poll ends with `CALLBACK_FAILED` (`cause` = what it
   * threw) and `poller.cursor` stays before that batch: a poller resumed from it gets the batch again.
   */
  onBatch?: (batch: Batch<Row>) => void | Promise<void>;
  /** The run's status or counts changed, or a retry began or ended (`run.retrying`). */
  onStatus?: (run: RunStatus) => void;
  /** Once, when the run ended in success or incomplete (`summary.status === "incomplete"`: rows known missing); not after `stop()`. */
  onComplete?: (summary: Summary) => void;
  /**
   * Once, on failure: the same error `start()` rejects with (not after `stop()`). Without an
   * `onError`, the failure is also logged, one `console.error` line (`captaindata-poller: CODE:
   * message`), so that it is never silent.
   */
  onError?: (error: CaptainDataError) => void;
  /** `onStatus`, `onComplete` or `onError` threw or its promise rejected (never fatal). @default console.error */
  onCallbackError?: (error: unknown, name: string) => void;
  /**
   * Tabs of one origin polling the same `baseUrl` and `jobUid` with the same credentials,
   * `headers` and `rowKey` share one poller: one tab (the leader) polls the API, every tab's
   * callbacks get the rows (from its own `cursor`), statuses and the run's outcome. Budgets,
   * `signal` and `stop()` are each tab's own: a leader that ends for its own reason leaves the
   * polling to the next tab, which goes on from its last row. The API key and headers never
   * leave the tab that holds them.
   * @default true where `navigator.locks`, `BroadcastChannel` and `crypto.subtle` exist (secure pages); elsewhere the poller is `"alone"`
   */
  shareAcrossTabs?: boolean;
  /**
   * Tabs share only with pollers given the same `shareKey` (or none): it enters the name of the
   * run's Web Lock and channel as part of a SHA-256 digest, never in clear. Pollers of one
   * origin that should not share a run (two widgets, two users of a kiosk) get different keys;
   * kept secret, a key narrows who can join. Same-origin scripts are still trusted (README,
   * "Several tabs, one poller"). Checked in every runtime; it changes nothing where tabs cannot
   * share.
   * @default undefined
   */
  shareKey?: string;
  /** This tab's role or the number of tabs sharing the poller changed (never called when `"alone"`). */
  onRoleChange?: (sharing: TabSharing) => void;
  /**
   * How rows arrive. `"poll"`: the poller reads `baseUrl`. `"push"`: the worker's stream
   * (`GET /v3/jobs/{uid}/stream`, a WebSocket; `baseUrl` is the worker's, the read token goes in
   * `headers` as `x-read-token` and travels as a subprotocol, never in the URL). `"auto"`: polls,
   * and moves to the stream as soon as an answer says the server has one (the worker's reads carry
   * `x-poller-stream`; Captain Data's do not), where a `WebSocket` exists. Under push the
   * callbacks, the iterator, `stop()`, the cursor and the errors are those of polling; a socket
   * that drops reconnects from the last row delivered (jittered back-off, `retry`'s delays) and
   * after `retry.retries` failures in a row the poller polls the worker from its cursor. Each tab
   * has its own socket (no tab sharing under push).
   * @default "auto"
   */
  transport?: Transport;
  /** The WebSocket constructor for `transport` `"push"`/`"auto"` (Node 20 has none without a flag: pass the `ws` package's). @default globalThis.WebSocket */
  WebSocket?: WebSocketConstructorLike;
}

/** How a {@link JobPoller} gets its rows: see {@link JobPollerOptions.transport}. */
export type Transport = "poll" | "push" | "auto";

/** What the push client needs of a WebSocket constructor (the browser's, Node ≥ 22's, or `ws`'s). */
export type WebSocketConstructorLike = new (url: string, protocols?: string | string[]) => { close(code?: number, reason?: string): void };

/** The body of a Captain Data webhook, relayed to {@link JobPoller.webhookReceived}. */
export interface WebhookPayload {
  job_uid?: string;
  /**
   * "Job successfully finished." or "Job failed." (a hint to read now: the API's status decides
   * the end); "Job successfully created." and unknown messages change nothing.
   */
  message?: string;
  uid?: string;
  project_uid?: string;
  error?: unknown;
  workflow_uid?: string;
  workflow_name?: string;
  job_name?: string;
  [key: string]: unknown;
}

/**
 * Polls one run and hands new rows to `onBatch` (or the async iterator) as they appear.
 * Constructing it sends nothing and, in a browser, loads nothing: the module loads on `start()`.
 */
export declare class JobPoller<Row = DefaultRow> implements AsyncIterable<Batch<Row>> {
  /** @throws {TypeError} naming the first invalid option (see {@link JobPollerOptions} for when each is checked). */
  constructor(options: JobPollerOptions<Row>);
  /**
   * Loads the module if needed, then polls. Resolves with the summary (`status: "stopped"` after
   * `stop()`), rejects with a {@link CaptainDataError} (`LOAD_FAILED` when the module could not
   * be loaded) or a `TypeError` for a bad option. A poller runs once: calling it again returns
   * the same promise; to go on after a stop, create a poller with `cursor: poller.cursor`.
   */
  start(): Promise<Summary>;
  /**
   * Stops at once, quietly (idempotent): no request after it; `start()` resolves with a
   * `"stopped"` summary; neither `onError` nor `onComplete` is called. A batch whose `onBatch`
   * promise is still pending is not counted: the cursor stays before it. A leader's stop hands
   * the polling to another tab.
   */
  stop(): void;
  /**
   * Resume token after the last delivered batch. Holds no secret. In a browser, before the
   * module has loaded, it is the `cursor` option (`undefined` when none was given: a poller
   * given `cursor: undefined` starts at the beginning).
   */
  readonly cursor: string | undefined;
  /** `"leader"` or `"follower"` while tabs share this poller, `"alone"` otherwise. */
  readonly role: PollerRole;
  /**
   * A webhook for this run arrived: a hint to read now. A success or failure webhook makes the
   * poller read the status and the results at once; the run ends only when the API's own
   * status says so. "Created" and unknown webhooks change nothing. Received before the module
   * has loaded, it is kept and acted on once it is.
   * @throws {TypeError} for another job's payload.
   */
  webhookReceived(payload: WebhookPayload): void;
  /**
   * The same batches as `onBatch`; starts the poller and waits for the consumer: a batch counts
   * as delivered when the loop asks for the next one. Leaving the loop (`break`, `return`, a
   * throw) stops the poller with the cursor before the batch the loop was on (save
   * `batch.cursor` to keep one you broke after); a throw propagates out of the loop as usual.
   * `iterator.throw(error)` ends the poll with `CALLBACK_FAILED`. A run that ended with rows
   * known missing ends the loop normally: the final result's `value` is the summary (`status:
   * "incomplete"`, see {@link IncompleteSummary}), which `await poller.start()` also gives.
   */
  [Symbol.asyncIterator](): AsyncIterator<Batch<Row>, Summary | undefined>;
  /** Releases the wasm memory of this object (a running poll keeps going). */
  free(): void;
}

/** Options of {@link pollStep}: one bounded round for a cron tick. */
export interface PollStepOptions extends Connection {
  jobUid: string;
  /** Where the previous step stopped. */
  cursor?: string;
  /** Request budget of this step (Workers: 50 subrequests on the free plan). @default 50 */
  maxRequests?: number;
  /** Time budget of this step. @default 25000 */
  deadlineMs?: number;
  /** A relayed webhook: this round reads the status and the results at once (the API's status still decides the end). */
  webhook?: WebhookPayload;
  /** `"status"`: a round reads the status, and the results only when they changed (one request when nothing did). `"every-tick"`: the results, then the status. @default "status" */
  readMode?: ReadMode;
  rowKey?: string;
  retry?: RetryOptions;
  seed?: number;
}

/** The outcome of one step. Frozen. */
export interface StepResult<Row = DefaultRow> {
  /** New rows of this step, in order. */
  readonly results: readonly Row[];
  /** Pass to the next step. */
  readonly cursor: string;
  /** The last run status seen (`"unknown"` before the first status read); `"incomplete"` when the run ended with rows known missing (see `missing`). */
  readonly status: string;
  /**
   * True only when the run is over for good: it completed, or `error` is final
   * (`isFinalError(error)`: ALL_INPUTS_FAILED, JOB_FAILED, UNAUTHORIZED, NOT_FOUND). Keep the
   * cursor all the same: a later step from it delivers no row again.
   */
  readonly done: boolean;
  /**
   * Why this step failed (with `code` and `message`). With `done: false` the failure is
   * retryable (RETRIES_EXHAUSTED after 5xx or network errors, BAD_RESPONSE, ABORTED, …): the
   * rows in `results` are new all the same, and the next step goes on from `cursor`. Test
   * `error && !done` for it. A step that reaches `deadlineMs` or `maxRequests` has no error: it
   * spent its budget (`done: false`, go on from `cursor`); TIMEOUT ends only a `JobPoller`.
   */
  readonly error?: CaptainDataError;
  /** Requests this step sent. */
  readonly requests: number;
  /**
   * Only when the run ended with rows known missing (`status` `"incomplete"`, `done` true, no
   * `error`): what is lacking. Every row stored was in `results` of this step or earlier ones.
   */
  readonly missing?: MissingRows;
}

/** One bounded round; only invalid options (a `TypeError`) and `LOAD_FAILED` reject. */
export declare function pollStep<Row = DefaultRow>(options: PollStepOptions): Promise<StepResult<Row>>;

/**
 * Which event a raw webhook body reports, as `webhookReceived` and `pollStep({ webhook })` read
 * it: `"succeeded"` and `"failed"` are hints to read now, `"created"` and `"other"` change
 * nothing. With `jobUid`, a body naming another run throws a `TypeError`. Synchronous: in a
 * browser, call it once the module is loaded (`await preload()`), else it throws `LOAD_FAILED`.
 */
export declare function classifyWebhook(payload: WebhookPayload, jobUid?: string): "created" | "succeeded" | "failed" | "other";

/** Captain Data v4 run statuses; an unknown one is passed through (and is not terminal). */
export type V4RunStatusValue =
  | "CREATED"
  | "INVALID"
  | "QUEUED"
  | "SCHEDULED"
  | "BLOCKED"
  | "STOPPED"
  | "RUNNING"
  | "FAILED"
  | "PARTIAL_SUCCEEDED"
  | "SUCCEEDED"
  | (string & {});

/** What a Captain Data v4 run status means (frozen). */
export interface V4StatusClass {
  /** `"succeeded"` and `"failed"` end the run; `"paused"` (`BLOCKED`) may last; unknown statuses are `"active"`. */
  readonly class: "active" | "paused" | "succeeded" | "failed";
  /** The v3 status a reader of the run is shown (`PARTIAL_SUCCEEDED` is `"warning"`, `INVALID` `"shutdown"`). */
  readonly v3Status: "pending" | "running" | "paused" | "finished" | "warning" | "shutdown" | "stopped";
  /** For a failure, the final error its reader ends with: `INVALID` is `ALL_INPUTS_FAILED`, `FAILED`/`STOPPED` `JOB_FAILED`. */
  readonly errorCode: "ALL_INPUTS_FAILED" | "JOB_FAILED" | null;
}

/**
 * Classifies a Captain Data v4 run status (case-insensitive) by the package's one set of rules,
 * the worker's for its v4 runs. Loads the module if needed; a status that is not a string
 * rejects with a `TypeError`.
 */
export declare function classifyV4Status(status: V4RunStatusValue): Promise<V4StatusClass>;

/** What {@link scheduleWorkflow} resolves with. */
export interface Scheduled {
  readonly jobUid: string;
  readonly message: string;
  readonly workflow: unknown;
}

/** Launches a workflow run (not retried: scheduling is not idempotent). Rejects with a {@link CaptainDataError}. */
export declare function scheduleWorkflow(
  connection: Connection,
  workflowUid: string,
  body: Record<string, unknown>,
): Promise<Scheduled>;
