// Types shared by `captaindata-poller/react`, `/vue` and `/svelte` (one core, thin adapters).
import type { Batch, CaptainDataError, CompleteSummary, DefaultRow, IncompleteSummary, JobPollerOptions, PollerRole, RunStatus } from "./index.js";

/**
 * Where the poller of a binding is.
 * - `"idle"`: no options (or no `jobUid`), or a server render: nothing is loaded.
 * - `"loading"`: the module and its wasm are loading, or no answer from the API yet.
 * - `"polling"`: the API answered; rows arrive as the run produces them.
 * - `"finished"`: the run ended in success (`summary` is set).
 * - `"incomplete"`: the run ended with rows known missing: every row stored was delivered, and
 *   `summary.missing` says what is lacking (not `"finished"`, not `"failed"`: `error` is null).
 * - `"failed"`: `error` is set (a {@link CaptainDataError}, or an {@link InvalidOptionError} naming a bad option).
 * - `"stopped"`: `stop()` was called (the cursor is kept). A run stopped in Captain Data (the
 *   API's `stopped` status) is `"failed"`, with `JOB_FAILED`.
 */
export type JobPollerStatus = "idle" | "loading" | "polling" | "finished" | "incomplete" | "failed" | "stopped";

/**
 * Options of a binding: those of `JobPoller`, plus `keepRows`; no `jobUid` (or `null`) is idle and
 * loads nothing. The poller restarts only when a value changes (`jobUid`, `baseUrl`,
 * credentials, `headers`, …); a new object or new inline callbacks with the same values keep it,
 * and the latest callbacks are the ones called. `cursor` is read once, when the poller starts
 * (passing each saved cursor back restarts nothing). Bindings with the same values share one
 * poller (and one `rows` array).
 */
export interface BindingOptions<Row = DefaultRow> extends Omit<JobPollerOptions<Row>, "jobUid" | "onBatch"> {
  /** The run to poll; absent, `null` or `""`: idle (nothing is loaded, no request). */
  jobUid?: string | null;
  /**
   * New rows, in order. A returned promise delays the next poll, and the rows join `rows` once
   * it fulfils; a throw or a rejection ends the poller with `CALLBACK_FAILED` (`cursor` stays
   * before that batch).
   */
  onBatch?: (batch: Batch<Row>) => void | Promise<void>;
  /**
   * How many of the latest rows `rows` keeps (`rowCount` still counts them all); `0` keeps none
   * (use `onBatch`). Bounds the memory of a huge run. @default Infinity
   */
  keepRows?: number;
}

/**
 * The `TypeError` of a bad option (`keepRows: "all"`, `intervalMs: -1`, …), given the code
 * `"INVALID_OPTION"` so that `state.error.code` reads the same whatever failed. Its message names
 * the option.
 */
export interface InvalidOptionError extends TypeError {
  readonly code: "INVALID_OPTION";
}

/**
 * Why a binding failed: a {@link CaptainDataError} (`LOAD_FAILED` when the wasm could not be
 * loaded, `CALLBACK_FAILED`, `RETRIES_EXHAUSTED`, …) or an {@link InvalidOptionError}. Either
 * way `error.code` and `error.message` exist.
 */
export type JobPollerError = CaptainDataError | InvalidOptionError;

/**
 * A retry under way, as `onStatus(run)` reports it in `run.retrying`: `attempt` 1 for the first
 * retry of a failing request, `retries` the configured limit, `delayMs` the wait before it,
 * `error` the last retryable failure (`RATE_LIMITED`, `SERVER_ERROR`, `NETWORK_ERROR`,
 * `TIMEOUT`, `BAD_RESPONSE`; `status` when there was an HTTP answer).
 */
export interface Retrying {
  readonly attempt: number;
  readonly retries: number;
  readonly delayMs: number;
  readonly error: { readonly code: string; readonly message: string; readonly status?: number };
}

/** What every state holds, whatever its `status`. */
interface JobPollerStateBase<Row> {
  /**
   * The rows delivered so far, in order (the latest `keepRows` of them): `rows[i]` is the run's
   * row number `rowsBefore + i`. One array that grows in place (earlier rows are never copied):
   * memoise on `rowCount`, not on `rows`.
   */
  readonly rows: readonly Row[];
  /** Rows of the run delivered so far, counted from its first row: always `rowsBefore + rows.length`. */
  readonly rowCount: number;
  /**
   * How many of the run's rows come before `rows[0]`: those before the `cursor` the poller
   * resumed from (shown before a reload, not delivered again), and those `keepRows` let go.
   * `0` when `rows` starts at the run's first row. An app that resumes with a saved cursor
   * shows its own saved rows (`rowsBefore` of them) and then `rows`, or leaves `cursor` out to
   * read the run from its start.
   */
  readonly rowsBefore: number;
  /** The run's last status, or null before the first read. */
  readonly run: RunStatus | null;
  /**
   * A retry under way (the last request failed and the next attempt waits `delayMs`), or null:
   * show "retrying (attempt/retries): error.message" while `status` stays `"loading"` or
   * `"polling"`. Null again after the next successful answer, and once the poller ended.
   */
  readonly retrying: Retrying | null;
  /** `"leader"`, `"follower"` or `"alone"` once started. */
  readonly role: PollerRole | null;
  /** Resume token after the last row in `rows` (save it to resume after a reload). */
  readonly cursor: string | null;
  /** Stops polling (no request after it); `status` becomes `"stopped"`. */
  readonly stop: () => void;
  /**
   * After `"failed"` or `"stopped"`: polls again from `cursor` with a new poller. `rows` stay and
   * the next rows follow them, none twice (the recovery of `CALLBACK_FAILED`, a timeout, …).
   */
  readonly resume: () => void;
}

/** The state while there is no outcome: `error` and `summary` are null. */
export interface JobPollerPendingState<Row = DefaultRow> extends JobPollerStateBase<Row> {
  readonly status: "idle" | "loading" | "polling" | "stopped";
  readonly error: null;
  readonly summary: null;
}

/** The run succeeded: `summary` is set. */
export interface JobPollerFinishedState<Row = DefaultRow> extends JobPollerStateBase<Row> {
  readonly status: "finished";
  readonly error: null;
  readonly summary: CompleteSummary;
}

/** The run ended with rows known missing: `summary.missing` is set. */
export interface JobPollerIncompleteState<Row = DefaultRow> extends JobPollerStateBase<Row> {
  readonly status: "incomplete";
  readonly error: null;
  readonly summary: IncompleteSummary;
}

/** The poller failed: `error` is set (`error.code` always exists). */
export interface JobPollerFailedState<Row = DefaultRow> extends JobPollerStateBase<Row> {
  readonly status: "failed";
  readonly error: JobPollerError;
  readonly summary: null;
}

/**
 * What a binding shows, a union discriminated by `status` (as TanStack Query's results are):
 * `if (state.status === "failed")` narrows `state.error` to a non-null {@link JobPollerError}, and
 * `"finished"` narrows `state.summary` to a {@link CompleteSummary}, `"incomplete"` to an
 * {@link IncompleteSummary} (`state.summary.missing`). Replaced by a new object on every
 * change, never mutated except `rows`.
 */
export type JobPollerState<Row = DefaultRow> =
  | JobPollerPendingState<Row>
  | JobPollerFinishedState<Row>
  | JobPollerIncompleteState<Row>
  | JobPollerFailedState<Row>;
