// The workloads, in API time (what a real run would take), and the time scale that shrinks
// each one so the whole bench takes minutes. Every duration handed to the simulator or to a
// contestant (run length, interval, retry delays, Retry-After, count lag) is divided by
// `scale`; measured delays are multiplied back, so figures read in API time.
//
// The API serves 1000-row pages and batch-processes (rows come in bursts, quiet ticks in
// between): `bursty`, `bursty-lag`, `bursty-100`, `one-page` and `trickle` are such runs. `small` and
// `fleet` fit in one page of any size; `medium`, `large` and `flaky` keep the 100- and
// 500-row pages and linear arrival they have always had, so their figures compare over time.

/** The seed's interval, and the library's default `intervalMs`. */
export const INTERVAL_MS = 10_000;
/** The library's default retry policy (DESIGN §3), scaled like every other delay. */
export const RETRY = Object.freeze({ retries: 5, minDelayMs: 1000, maxDelayMs: 60_000 });
export const STATUS_EVERY = 5;
export const STEP_DEADLINE_MS = 25_000;

const medium = { rows: 2000, pageSize: 100, durationMs: 10 * 60_000, startDelayMs: 10_000 };
/**
 * 3,000 rows in 30 bursts 69 s (6.9 intervals) apart: Captain Data's batches. The run the
 * package was first measured on (results read on every tick: ≈35× the rows' own bytes).
 * Bursts a whole number of intervals apart would meet a reader of fixed interval at one phase
 * all run long (each row waits either almost nothing or a whole interval, which of the two
 * decided by the reader's start and drift): 6.9 intervals meets it at ten phases, as a
 * run's batches do, whose spacing owes nothing to the poller's interval.
 */
const bursty = { rows: 3000, pageSize: 1000, durationMs: 34.5 * 60_000, startDelayMs: 10_000, arrival: { bursts: 30 } };
/**
 * 2,000 rows in 20 bursts of 100, 117 s (11.7 intervals: ten phases, as bursty's) apart:
 * bursts further apart than the quiet ticks after which a status-guided reader reads the
 * results whatever the count says (QUIET_TICKS, 6), so that rule's cost on a partly filled
 * page shows. Physical limit 5.5×,
 * as bursty's: each row once, and the page of each burst's start re-read once (0, 100, …, 900
 * rows of each 1000-row page).
 */
const bursty100 = { rows: 2000, pageSize: 1000, durationMs: 39 * 60_000, startDelayMs: 10_000, arrival: { bursts: 20 } };

/** 429 bursts (3 in a row, Retry-After 2 s) at a few points of the run, on top of 10 % 5xx. */
const burst = (nth) => ({ kind: "any", nth, count: 3, respond: 429, retryAfter: 2 });

/**
 * @typedef {{ id: string, what: string, jobs: number, trials?: number, scale: number, spec: object,
 *   faults?: object, measureIdle?: boolean }} Workload
 * @type {Workload[]}
 */
export const WORKLOADS = [
  {
    id: "small",
    what: "50 rows, one page, 1 min run",
    jobs: 1,
    // One run is six ticks: whether one of them falls just before the run's end (a nearly
    // full page read, then the full page again) swings its bytes by ±15 %. Polled from twelve
    // points of an interval, the figures are those of a run started at any moment.
    trials: 12,
    scale: 100,
    spec: { rows: 50, pageSize: 1000, durationMs: 60_000, startDelayMs: 10_000 },
  },
  {
    id: "bursty",
    what: "3,000 rows in 30 bursts 69 s apart over 34.5 min, pages of 1000",
    jobs: 1,
    // Its p95 row delay is that of the worst bursts but one or two (a burst is 3 % of the
    // rows): two trials half an interval apart double the bursts that p95 is read from.
    trials: 2,
    scale: 100,
    spec: bursty,
  },
  {
    id: "bursty-lag",
    what: "bursty, with row_count 15 s (1.5 intervals) behind the rows",
    jobs: 1,
    scale: 100,
    spec: { ...bursty, countLagMs: 15_000 },
  },
  {
    id: "bursty-lag2",
    what: "bursty, with row_count 20 s (2 intervals) behind the rows",
    jobs: 1,
    scale: 100,
    spec: { ...bursty, countLagMs: 20_000 },
  },
  {
    id: "bursty-100",
    what: "2,000 rows in 20 bursts of 100, 117 s (11.7 intervals) apart, over 39 min, pages of 1000",
    jobs: 1,
    // A burst is 5 % of the rows, so one trial's p95 row delay is its second-worst burst's: a
    // reader of fixed interval meets ten phases of its tick in a run, and three trials a third
    // of an interval apart make them thirty, as many as a run started at any moment meets.
    trials: 3,
    scale: 100,
    spec: bursty100,
  },
  {
    id: "one-page",
    what: "600 rows in 12 bursts over 10 min: one page of 1000",
    jobs: 1,
    scale: 100,
    spec: { rows: 600, pageSize: 1000, durationMs: 10 * 60_000, startDelayMs: 10_000, arrival: { bursts: 12 } },
    // Twelve bursts: the p95 row delay of one run is its worst burst's wait. Six runs, started
    // 1/6 of an interval apart, make it the p95 of 72 bursts.
    trials: 6,
  },
  {
    id: "trickle",
    what: "300 rows one at a time over 2 h (one per 24 s), pages of 1000",
    jobs: 1,
    // 2 h in 36 s; a request (≈1 ms) is then ≈0.2 s of API time.
    scale: 200,
    spec: { rows: 300, pageSize: 1000, durationMs: 2 * 3_600_000, startDelayMs: 10_000 },
  },
  { id: "medium", what: "2,000 rows over 10 min, pages of 100 (linear)", jobs: 1, scale: 100, spec: medium },
  {
    id: "large",
    what: "50,000 rows over 30 min, pages of 500 (linear)",
    jobs: 1,
    scale: 100,
    spec: { rows: 50_000, pageSize: 500, durationMs: 30 * 60_000, startDelayMs: 10_000 },
  },
  {
    id: "flaky",
    what: "medium + 10 % 5xx + 429 bursts with Retry-After",
    jobs: 1,
    scale: 100,
    spec: medium,
    faults: { rate5xx: 0.1, script: [burst(20), burst(60), burst(120)] },
  },
  {
    id: "fleet",
    what: "1,000 concurrent runs of 20 rows (1 min each) in one process",
    jobs: 1000,
    // 1,000 pollers on one 10 s interval are 100+ requests per second at scale 1; at 5 the
    // simulator and the client (2 cores) keep up, at 10 they saturate and delays measure the queue.
    scale: 5,
    spec: { rows: 20, pageSize: 1000, durationMs: 60_000, startDelayMs: 20_000 },
    measureIdle: true,
  },
];

/** The simulator's job spec for one job of `workload`, in real (scaled) time. */
export function scaledSpec(workload, jobUid) {
  const { spec, scale, faults } = workload;
  const scaledFaults = faults && {
    ...faults,
    script: faults.script?.map((e) => ({ ...e, retryAfter: e.retryAfter / scale })),
  };
  return {
    ...spec,
    jobUid,
    durationMs: spec.durationMs / scale,
    startDelayMs: spec.startDelayMs / scale,
    ...(spec.countLagMs ? { countLagMs: spec.countLagMs / scale } : {}),
    ...(scaledFaults ? { faults: scaledFaults } : {}),
  };
}

/** The options every contestant gets for `workload`, in real (scaled) time. */
export function scaledOptions(workload) {
  const { scale } = workload;
  return {
    intervalMs: INTERVAL_MS / scale,
    statusEvery: STATUS_EVERY,
    retry: { retries: RETRY.retries, minDelayMs: RETRY.minDelayMs / scale, maxDelayMs: RETRY.maxDelayMs / scale },
    // pollStep's default deadline (25 s), scaled like every other time.
    deadlineMs: STEP_DEADLINE_MS / scale,
  };
}

/** The workloads named in `ids` (all when empty), or a TypeError listing the ids. */
export function selectWorkloads(ids = []) {
  const unknown = ids.filter((id) => !WORKLOADS.some((w) => w.id === id));
  if (unknown.length > 0) throw new TypeError(`Unknown workload ${unknown.join(", ")}; one of ${WORKLOADS.map((w) => w.id).join(", ")}`);
  return ids.length === 0 ? WORKLOADS : WORKLOADS.filter((w) => ids.includes(w.id));
}
