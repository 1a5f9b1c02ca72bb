// `captaindata-poller/svelte` (any Svelte: the store contract needs no import).
import type { DefaultRow } from "./index.js";
import type { BindingOptions, JobPollerState } from "./bindings.js";

export type { BindingOptions, InvalidOptionError, JobPollerError, JobPollerState, JobPollerStatus, Retrying } from "./bindings.js";

/** Svelte's readable store contract: `run` gets the value now and on every change. */
export interface JobPollerStore<Row = DefaultRow> {
  subscribe(run: (value: JobPollerState<Row>) => void): () => void;
}

/**
 * A readable store of the poller's state (`$poller.rows`, `$poller.status`, …). Polling starts
 * with the first subscriber and stops when the last one unsubscribes. The value a subscriber
 * gets at once is `"idle"` (a server render stays idle); `"loading"` follows when the poller
 * starts. For other options (a new `jobUid`), make a new store: `$derived(createJobPoller(…))`.
 */
export declare function createJobPoller<Row = DefaultRow>(
  options: BindingOptions<Row> | null | undefined,
): JobPollerStore<Row>;
