// The contestants, in table order. Each module exports a factory
// `(options) => { start(): Promise<summary>, stop() }` taking the same options
// (connection, jobUid, intervalMs, statusEvery, retry, deadlineMs, onBatch, onStatus); a child process
// imports only the one it runs, so a JS contestant never loads the wasm. `skip` lists the
// workloads a contestant sits out; `only`, the ones it alone runs; `calibrated`, that it is
// given a finished run outside the workload (`calibrationJobUid`) to measure bare reads on.

export const CONTESTANTS = [
  { id: "library", label: "1 captaindata-poller", module: "./library.mjs", factory: "createLibrary" },
  {
    // The same engine as a cron worker drives it: `pollStep` every interval with a cursor.
    // Not on the fleet (its 1,000 concurrent loops would share the CPU it measures per round).
    id: "library-step",
    label: "1c captaindata-poller, pollStep rounds",
    module: "./step.mjs",
    factory: "createStep",
    skip: ["fleet"],
    calibrated: true,
  },
  {
    // The same rounds where a cron Worker runs them: `pollStep` in workerd (Miniflare), its CPU
    // workerd's own. On `bursty`, the workload the CPU per round is stated on, and `small`
    // (which the bench's smoke test runs).
    id: "library-step-workerd",
    label: "1d captaindata-poller, pollStep rounds in workerd",
    module: "./step-workerd.mjs",
    factory: "createStepWorkerd",
    only: ["small", "bursty"],
    calibrated: true,
  },
  { id: "seed", label: "2 seed loop (ported: all pages)", module: "./seed-loop.mjs", factory: "createSeedLoop" },
  {
    id: "seed-as-written",
    label: "2w seed loop as written (page 1)",
    module: "./seed-loop.mjs",
    factory: "createSeedLoop",
    options: { firstPageOnly: true },
  },
  { id: "refetch", label: "3 refetchInterval (full refetch)", module: "./refetch.mjs", factory: "createRefetch" },
  { id: "incremental", label: "4 hand-written incremental", module: "./incremental.mjs", factory: "createIncremental" },
];

/** Whether contestant `c` runs workload `id`. */
export const plays = (c, id) => !c.skip?.includes(id) && (!c.only || c.only.includes(id));

/** The contestant with this id, or a TypeError listing the ids. */
export function contestant(id) {
  const found = CONTESTANTS.find((c) => c.id === id);
  if (!found) throw new TypeError(`Unknown contestant ${id}; one of ${CONTESTANTS.map((c) => c.id).join(", ")}`);
  return found;
}

/** Loads the factory of a contestant, with its fixed options applied. */
export async function loadFactory(id) {
  const c = contestant(id);
  const module = await import(new URL(c.module, import.meta.url).href);
  const create = module[c.factory];
  return (options) => create({ ...options, ...c.options });
}
