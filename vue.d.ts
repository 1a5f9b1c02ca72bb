// `captaindata-poller/vue` (Vue ≥ 3.3).
import type { MaybeRefOrGetter, ShallowRef } from "vue";
import type { DefaultRow } from "./index.js";
import type { BindingOptions, JobPollerState } from "./bindings.js";

export type { BindingOptions, InvalidOptionError, JobPollerError, JobPollerState, JobPollerStatus, Retrying } from "./bindings.js";

/**
 * Each field of {@link JobPollerState} as a read-only shallow ref, `stop()`, `resume()`, and
 * `state`: the whole state in one ref, whose `status` narrows the other fields
 * (`state.value.status === "failed"` gives a non-null `state.value.error`; in a template,
 * `v-if="state.status === 'failed'"` then `state.error.code`).
 */
export type JobPollerRefs<Row = DefaultRow> = {
  readonly [K in Exclude<keyof JobPollerState<Row>, "stop" | "resume">]: Readonly<ShallowRef<JobPollerState<Row>[K]>>;
} & { readonly state: Readonly<ShallowRef<JobPollerState<Row>>>; readonly stop: () => void; readonly resume: () => void };

/**
 * Polls `options.jobUid` from the component's mount (never in a server render; at once in a
 * plain effect scope) until its scope is disposed. `options` may be a ref or a getter: a change
 * of its values restarts the poller.
 */
export declare function useJobPoller<Row = DefaultRow>(
  options: MaybeRefOrGetter<BindingOptions<Row> | null | undefined>,
): JobPollerRefs<Row>;
