// `captaindata-poller/react` (React ≥ 18).
import type { DefaultRow } from "./index.js";
import type { BindingOptions, JobPollerState } from "./bindings.js";

export type { BindingOptions, InvalidOptionError, JobPollerError, JobPollerState, JobPollerStatus, Retrying } from "./bindings.js";

/**
 * Polls `options.jobUid` while the component is mounted and re-renders on each change.
 * `null` (or no `jobUid`) is idle; a server render is idle and never loads the wasm.
 * StrictMode-safe: one poller, every row once. Unmounting stops it. The state is a union on
 * `status`: `state.status === "failed"` narrows `state.error` to a non-null error with a `code`.
 */
export declare function useJobPoller<Row = DefaultRow>(
  options: BindingOptions<Row> | null | undefined,
): JobPollerState<Row>;
