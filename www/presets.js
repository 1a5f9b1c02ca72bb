// Fault presets of the simulated run form → the simulator's job spec (sim/jobs.js, sim/faults.js).

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
 * The body of `POST /__sim/jobs` for the form's values.
 * @param {{ inputs: number, rowsPerInput: number, durationMs: number, pageSize: number, preset: string }} form
 */
export function simulatedJobSpec({ inputs, rowsPerInput, durationMs, pageSize, preset }) {
  const chosen = FAULT_PRESETS[preset] ?? FAULT_PRESETS.none;
  return { inputs, rows: inputs * rowsPerInput, durationMs, pageSize, ...chosen.spec };
}
