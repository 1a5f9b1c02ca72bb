// Types shared by `captaindata-poller/react`, `/vue` and `/svelte` (one core, thin adapters).
import type { Batch, CaptainDataError, DefaultRow, JobPollerOptions, PollerRole, RunStatus, Summary } from "./index.js";

/**
 * Where the poller of a binding is.
 * - `"idle"`: no options (or no `jobUid`), or a server render: nothing is loaded.
 * - `"loading"`: the module and its wasm are loading, or no answer from the API yet.
 * - `"polling"`: the API answered; rows arrive as the run produces them.
 * - `"finished"`: the run ended in success (`summary` is set).
 * - `"failed"`: `error` is set (a {@link CaptainDataError}, or a `TypeError` naming a bad option).
 * - `"stopped"`: `stop()` was called (the cursor is kept).
 */
export type JobPollerStatus = "idle" | "loading" | "polling" | "finished" | "failed" | "stopped";

/**
 * Options of a binding: those of `JobPoller`, plus `keepRows`. The poller restarts only when a
 * value changes (`jobUid`, `baseUrl`, credentials, `headers`, …); a new object or new inline
 * callbacks with the same values keep it, and the latest callbacks are the ones called.
 * `cursor` is read once, when the poller starts (passing each saved cursor back restarts
 * nothing). Bindings with the same values share one poller (and one `rows` array).
 */
export interface BindingOptions<Row = DefaultRow> extends JobPollerOptions<Row> {
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

/** What a binding shows: replaced by a new object on every change, never mutated except `rows`. */
export interface JobPollerState<Row = DefaultRow> {
  readonly status: JobPollerStatus;
  /**
   * The rows delivered so far, in order (the latest `keepRows` of them). One array that grows in
   * place (earlier rows are never copied): memoise on `rowCount`, not on `rows`.
   */
  readonly rows: readonly Row[];
  /** Rows delivered so far (including those before a resume `cursor`). */
  readonly rowCount: number;
  /** The run's last status, or null before the first read. */
  readonly run: RunStatus | null;
  /** Why it failed (`LOAD_FAILED` when the wasm could not be loaded). */
  readonly error: CaptainDataError | TypeError | null;
  /** Set when `status` is `"finished"`. */
  readonly summary: Summary | null;
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
