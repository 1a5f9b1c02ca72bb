// The crate's rules, as the package's JS reads them (`captaindata-poller/rules`): generated from
// the Rust code at build time, so a proxy, a worker or a dashboard can use the same values.
import type { ErrorCode, V4StatusClass } from "./index.js";

/** A run status's class: keep polling (`active`, `paused`), or over (`succeeded`, `failed`). */
export type RunClass = "active" | "paused" | "succeeded" | "failed";

/** Every `error.code`, in a stable order. */
export declare const ERROR_CODES: readonly ErrorCode[];
/** The codes that polling again with the same options cannot change. */
export declare const FINAL_ERROR_CODES: readonly ErrorCode[];
/** The class of each documented v3 run status, by its lower-case name. */
export declare const RUN_STATUS_CLASSES: { readonly [status: string]: RunClass };
/** The words that mark a run's `error_message` as All Inputs Failed, in any case. */
export declare const ALL_INPUTS_FAILED_TEXT: string;
/** Each documented v4 run status (`CREATED`, …, `SUCCEEDED`). */
export declare const V4_STATUSES: { readonly [status: string]: V4StatusClass };
/** A poller's default options (`null`: none). */
export declare const DEFAULTS: {
  readonly baseUrl: string;
  readonly intervalMs: number;
  readonly statusEvery: number;
  readonly readMode: "status" | "every-tick";
  readonly maxDurationMs: number | null;
  readonly maxRequests: number | null;
  readonly timeoutMs: number;
  readonly hiddenIntervalMs: number | null;
  readonly pageSize: number;
  readonly retry: { readonly retries: number; readonly minDelayMs: number; readonly maxDelayMs: number };
};
/** A step's defaults (`pollStep`). */
export declare const STEP_DEFAULTS: { readonly maxRequests: number; readonly deadlineMs: number; readonly readMode: "status" | "every-tick" };
/** The engine's TIMEOUT message; `{maxDurationMs}` stands for the value. */
export declare const TIMEOUT_TEXT: string;
/** The engine's BUDGET_EXHAUSTED message; `{maxRequests}` stands for the value. */
export declare const BUDGET_EXHAUSTED_TEXT: string;
/** The engine's CALLBACK_FAILED message; `{from}` and `{to}` stand for the rows. */
export declare const CALLBACK_FAILED_TEXT: string;
/** The message of every ABORTED error. */
export declare const ABORTED_TEXT: string;
/** The TypeError message of a webhook payload naming another run (`webhookReceived`, `pollStep`). */
export declare const WEBHOOK_OF_ANOTHER_RUN_TEXT: string;
/** The class of a v3 run status, in any case (an unknown status is `"active"`). */
export declare function classifyStatus(status: string | null | undefined): RunClass;
/** True when `message` says All Inputs Failed (any case). */
export declare function isAllInputsFailed(message: string | null | undefined): boolean;
/** `text` (one of the `*_TEXT` messages) with its `{name}`s filled from `values`. */
export declare function fillText(text: string, values: Record<string, unknown>): string;
