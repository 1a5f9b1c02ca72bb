// The five workloads of issue 5, in API time (what a real run would take), and the time
// scale that shrinks each one so the whole bench takes minutes. Every duration handed to the
// simulator or to a contestant (run length, interval, retry delays, Retry-After) is divided by
// `scale`; measured delays are multiplied back, so figures read in API time.

/** The seed's interval, and the library's default `intervalMs`. */
export const INTERVAL_MS = 10_000;
/** The library's default retry policy (DESIGN §3), scaled like every other delay. */
export const RETRY = Object.freeze({ retries: 5, minDelayMs: 1000, maxDelayMs: 60_000 });
export const STATUS_EVERY = 5;

const medium = { rows: 2000, pageSize: 100, durationMs: 10 * 60_000, startDelayMs: 10_000 };

/** 429 bursts (3 in a row, Retry-After 2 s) at a few points of the run, on top of 10 % 5xx. */
const burst = (nth) => ({ kind: "any", nth, count: 3, respond: 429, retryAfter: 2 });

/**
 * @typedef {{ id: string, what: string, jobs: number, scale: number, spec: object,
 *   faults?: object, measureIdle?: boolean }} Workload
 * @type {Workload[]}
 */
export const WORKLOADS = [
  {
    id: "small",
    what: "50 rows, one page, 1 min run",
    jobs: 1,
    scale: 100,
    spec: { rows: 50, pageSize: 100, durationMs: 60_000, startDelayMs: 10_000 },
  },
  { id: "medium", what: "2,000 rows over 10 min, pages of 100", jobs: 1, scale: 100, spec: medium },
  {
    id: "large",
    what: "50,000 rows over 30 min, pages of 500",
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
    spec: { rows: 20, pageSize: 100, durationMs: 60_000, startDelayMs: 20_000 },
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
  };
}

/** The workloads named in `ids` (all when empty), or a TypeError listing the ids. */
export function selectWorkloads(ids = []) {
  const unknown = ids.filter((id) => !WORKLOADS.some((w) => w.id === id));
  if (unknown.length > 0) throw new TypeError(`Unknown workload ${unknown.join(", ")}; one of ${WORKLOADS.map((w) => w.id).join(", ")}`);
  return ids.length === 0 ? WORKLOADS : WORKLOADS.filter((w) => ids.includes(w.id));
}
