// Type test of the React, Vue and Svelte bindings: compiled with `tsc --noEmit -p
// tests/bindings/types` (tests/demo/bindings-package.test.mjs), never run. `@ts-expect-error`
// lines must stay errors: they prove the types reject what they should.
import { useJobPoller } from "captaindata-poller/react";
import type { JobPollerState, JobPollerStatus } from "captaindata-poller/react";
import { useJobPoller as useVueJobPoller } from "captaindata-poller/vue";
import { createJobPoller } from "captaindata-poller/svelte";
import { CaptainDataError, type ErrorCode } from "captaindata-poller";

interface Lead {
  id: string;
  full_name: string;
}

// React: the rows are typed by the generic, in the state and in onBatch.
const lead = useJobPoller<Lead>({
  jobUid: "run",
  baseUrl: "https://proxy.example/v3",
  keepRows: 1000,
  onBatch(batch) {
    const first: string = batch.results[0].full_name;
    void first;
  },
});
const name: string = lead.rows[0].full_name;
// @ts-expect-error not a field of Lead
void lead.rows[0].company;
const status: JobPollerStatus = lead.status;
const count: number = lead.rowCount;
const cursor: string | null = lead.cursor;
if (lead.error instanceof CaptainDataError) {
  const code: ErrorCode = lead.error.code;
  void code;
}
lead.stop();
lead.resume();
// @ts-expect-error the state is read-only
lead.rows = [];
// @ts-expect-error a status outside the seven
const wrong: JobPollerState<Lead>["status"] = "running";
void [name, status, count, cursor, wrong];

// Without a generic, rows are records of unknown values; null options are idle.
const plain = useJobPoller({ jobUid: "run" });
const anything: unknown = plain.rows[0]?.whatever;
useJobPoller(null);
// @ts-expect-error keepRows is a number
useJobPoller({ jobUid: "run", keepRows: "all" });
// No jobUid, or null: idle, as documented.
useJobPoller({ baseUrl: "https://proxy.example/v3" });
useJobPoller({ jobUid: null, baseUrl: "https://proxy.example/v3" });
// @ts-expect-error jobUid is a string when given
useJobPoller({ jobUid: 42 });
void anything;

// The state is a union on `status` (TanStack-style): each narrows without a cast.
const state = useJobPoller<Lead>({ jobUid: "run" });
if (state.status === "failed") {
  const code: ErrorCode | "INVALID_OPTION" = state.error.code;
  const message: string = state.error.message;
  // @ts-expect-error a failed state has no summary
  void state.summary.totalResults;
  void [code, message];
} else if (state.status === "finished") {
  const total: number = state.summary.totalResults;
  const none: null = state.error;
  // @ts-expect-error a finished state lacks nothing
  const lacking: string = state.summary.missing.code;
  void [total, none, lacking];
} else if (state.status === "incomplete") {
  // Rows known missing: its own status, its summary says what is lacking.
  const code: "ROWS_MISSING" | "ROWS_CAP_REACHED" = state.summary.missing.code;
  const batches: readonly string[] = state.summary.missing.batches;
  const none: null = state.error;
  void [code, batches, none];
} else {
  const none: null = state.error;
  // @ts-expect-error no summary before the end
  void state.summary.totalResults;
  void none;
}
// @ts-expect-error error may be null outside a "failed" branch
void state.error.code;
const before: number = state.rowsBefore;
const retry = state.retrying;
if (retry !== null) {
  const line: string = `retrying ${retry.attempt}/${retry.retries} in ${retry.delayMs} ms: ${retry.error.code} ${retry.error.message} ${retry.error.status ?? ""}`;
  void line;
}
void before;

// Vue: shallow refs of the same state; options may be a getter.
const vue = useVueJobPoller<Lead>(() => ({ jobUid: "run" }));
const vueName: string = vue.rows.value[0].full_name;
const vueStatus: JobPollerStatus = vue.status.value;
// @ts-expect-error the refs are read-only
vue.status.value = "idle";
vue.stop();
vue.resume();
// `state`: the whole state in one ref, narrowed by its status.
const whole = vue.state.value;
if (whole.status === "failed") {
  const vueCode: string = whole.error.code;
  void vueCode;
}
const vueBefore: number = vue.rowsBefore.value;
void [vueName, vueStatus, vueBefore];

// Svelte: a readable store of the same state.
const store = createJobPoller<Lead>({ jobUid: "run" });
const unsubscribe: () => void = store.subscribe((value) => {
  const svelteName: string = value.rows[0].full_name;
  if (value.status === "failed") {
    const svelteCode: string = value.error.code;
    void svelteCode;
  }
  void svelteName;
});
createJobPoller<Lead>({ jobUid: null });
unsubscribe();
