// The simulated run form → the simulator's job spec (sim/jobs.js, sim/faults.js): fault presets
// and how rows arrive.

/** Each preset: a label for the form and what it adds to the job spec. */
export const FAULT_PRESETS = Object.freeze({
  none: { label: "None", spec: {} },
  flaky: { label: "Flaky network", spec: { faults: { dropRate: 0.12, rate5xx: 0.12 } } },
  rateLimited: { label: "Rate limited (429)", spec: { faults: { rate429: 0.3, retryAfter: 1 } } },
  slow: { label: "Slow server", spec: { faults: { slowMs: 900 } } },
  allInputsFailed: { label: "All Inputs Failed", spec: { outcome: "allInputsFailed" } },
  shutdown: { label: "Run shut down", spec: { outcome: "shutdown" } },
});

/**
 * How rows arrive. Captain Data delivers a run's rows in batches with quiet ticks in between
 * (the bench's `bursty` workload), so bursts are the default.
 */
export const ARRIVALS = Object.freeze({
  bursts: { label: "In bursts", title: "As Captain Data delivers them: batches of rows, quiet ticks in between" },
  linear: { label: "Steadily", title: "A few more rows on every tick" },
});

/**
 * The body of `POST /__sim/jobs` for the form's values.
 * @param {{ inputs: number, rowsPerInput: number, durationMs: number, pageSize: number, preset: string,
 *   arrival?: string, bursts?: number }} form
 */
export function simulatedJobSpec({ inputs, rowsPerInput, durationMs, pageSize, preset, arrival = "bursts", bursts = 5 }) {
  const chosen = FAULT_PRESETS[preset] ?? FAULT_PRESETS.none;
  const rowsArrive = arrival === "linear" ? {} : { arrival: { bursts: Math.max(1, Math.round(bursts)) } };
  return { inputs, rows: inputs * rowsPerInput, durationMs, pageSize, ...rowsArrive, ...chosen.spec };
}
