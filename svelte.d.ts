// `captaindata-poller/svelte` (any Svelte: the store contract needs no import).
import type { BindingOptions, JobPollerState } from "./bindings.js";

export type { BindingOptions, JobPollerState, JobPollerStatus, RowBatch } from "./bindings.js";

/** Svelte's readable store contract: `run` gets the value now and on every change. */
export interface JobPollerStore<Row = Record<string, unknown>> {
  subscribe(run: (value: JobPollerState<Row>) => void): () => void;
}

/**
 * A readable store of the poller's state (`$poller.rows`, `$poller.status`, …). Polling starts
 * with the first subscriber and stops when the last one unsubscribes.
 */
export declare function createJobPoller<Row = Record<string, unknown>>(
  options: BindingOptions<Row> | null | undefined,
): JobPollerStore<Row>;
