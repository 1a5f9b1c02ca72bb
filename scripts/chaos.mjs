// `npm run chaos -- --runs N --seed S [--concurrency C]`: randomized runs of the built package
// (its Node entry) over HTTP against the simulator's faults, each stopped mid-run and resumed
// from its cursor by a second poller. Prints one line of figures; exits 1 when any is non-zero,
// with the seed of each failing run (`--runs 1 --seed <it>` replays that run).
import { parseArgs } from "node:util";
import { JobPoller, pollStep } from "captaindata-poller";
import { startSimServer } from "../sim/server.mjs";
import { clean, runCampaign, summaryLine } from "./chaos/campaign.js";
import { StepError, cli, isMain } from "./exec.mjs";

// Distinctive, so that finding it anywhere but in a request header is unambiguous.
export const CHAOS_KEY = "sk_chaos_7Qm2xV9pL4tR8wZ1";
const PROJECT_ID = "chaos-project";

/** Runs a campaign against a fresh simulator on 127.0.0.1; resolves with its totals. */
export async function chaos({ runs = 200, seed = 1, concurrency = 6, quiet = false } = {}) {
  // A fixed simulator seed: a job's fault dice then depend on its uid (`chaos-<run seed>`) alone,
  // so `--runs 1 --seed <run seed>` replays that run's faults.
  const server = await startSimServer({ apiKey: CHAOS_KEY, projectId: PROJECT_ID, seed: 1 });
  try {
    return await runCampaign({
      JobPoller,
      pollStep,
      baseUrl: server.url,
      controlOrigin: server.origin,
      apiKey: CHAOS_KEY,
      projectId: PROJECT_ID,
      runs,
      seed,
      concurrency,
      onFailure: quiet ? undefined : ({ seed: s, problems }) => console.log(`chaos: run seed ${s} FAILED (replay: npm run chaos -- --runs 1 --seed ${s})\n  ${problems.join("\n  ")}`),
    });
  } finally {
    await server.close();
  }
}

async function main() {
  const { values } = parseArgs({
    options: { runs: { type: "string", default: "200" }, seed: { type: "string" }, concurrency: { type: "string", default: "6" } },
  });
  const runs = Number(values.runs);
  // Without --seed, a fresh one each time (printed, so a failure can be replayed).
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const concurrency = Number(values.concurrency);
  for (const [name, v] of [["runs", runs], ["seed", seed], ["concurrency", concurrency]]) {
    if (!Number.isInteger(v) || v < (name === "seed" ? 0 : 1)) throw new StepError("chaos", `--${name} must be an integer`);
  }
  console.log(`chaos: ${runs} runs from seed ${seed}, ${concurrency} at a time`);
  const totals = await chaos({ runs, seed, concurrency });
  console.log(`chaos: ${totals.requests} requests, ${(totals.ms / 1000).toFixed(1)} s, outcome errors ${totals.outcomeErrors}`);
  console.log(summaryLine(totals));
  if (!clean(totals)) {
    throw new StepError("chaos", `failing seeds: ${totals.failures.map((f) => f.seed).join(", ")}`);
  }
}

if (isMain(import.meta.url)) cli(main);
