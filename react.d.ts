// `captaindata-poller/react` (React ≥ 18).
import type { BindingOptions, JobPollerState } from "./bindings.js";

export type { BindingOptions, JobPollerState, JobPollerStatus, RowBatch } from "./bindings.js";

/**
 * Polls `options.jobUid` while the component is mounted and re-renders on each change.
 * `null` (or no `jobUid`) is idle; a server render is idle and never loads the wasm.
 * StrictMode-safe: one poller, every row once. Unmounting stops it.
 */
export declare function useJobPoller<Row = Record<string, unknown>>(
  options: BindingOptions<Row> | null | undefined,
): JobPollerState<Row>;
