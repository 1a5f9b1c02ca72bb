// The seeded fault plan of one job: which answer the next request of a kind gets.
import { seededRandom } from "./random.js";

/**
 * @typedef {"results" | "run" | "any"} ScriptKind
 * @typedef {429 | 500 | 502 | 503 | 504 | "drop" | "malformed" | "slow"} ScriptAnswer
 * @typedef {{ kind: ScriptKind, nth: number, respond: ScriptAnswer, retryAfter?: number | "date" | null,
 *   count?: number, ms?: number }} ScriptEntry
 *   `nth` is 1-based and counts requests of `kind` to this job; `count` (default 1) consecutive ones.
 * @typedef {{ rate429?: number, retryAfter?: number | "date" | null, rate5xx?: number,
 *   dropRate?: number, slowMs?: number, slowRate?: number, malformedRate?: number,
 *   flapStatus?: boolean, duplicateRows?: number, wrongCredentials?: boolean,
 *   rateLimitReset?: "delta" | "epoch", script?: ScriptEntry[] }} FaultPlan
 *   `slowMs` delays every request unless `slowRate` (a probability) is also given.
 *   `rateLimitReset` adds `X-RateLimit-Reset` to 429s: seconds to wait, or the Unix time to wait for.
 * @typedef {{ respond: ScriptAnswer | null, retryAfter: number | "date" | null, delayMs: number }} Fault
 */

const SERVER_ERRORS = [500, 502, 503, 504];
const FLAP_STATUSES = ["running", "paused", "pending", "queued"];
const SCRIPT_ANSWERS = new Set([429, 500, 502, 503, 504, "drop", "malformed", "slow"]);

/**
 * Checks a fault plan's shape so a typo in a test fails loudly instead of silently doing nothing.
 * @param {FaultPlan} plan
 */
export function validateFaultPlan(plan) {
  if (plan === null || typeof plan !== "object") throw new TypeError("Expected `faults` to be an object");
  for (const name of ["rate429", "rate5xx", "dropRate", "malformedRate", "slowRate"]) {
    const v = plan[name];
    if (v !== undefined && !(typeof v === "number" && v >= 0 && v <= 1)) {
      throw new TypeError(`Expected \`faults.${name}\` to be a probability in [0, 1] (got ${v})`);
    }
  }
  if (plan.rateLimitReset !== undefined && !["delta", "epoch"].includes(plan.rateLimitReset)) {
    throw new TypeError(`Expected \`faults.rateLimitReset\` to be "delta" or "epoch" (got ${plan.rateLimitReset})`);
  }
  for (const entry of plan.script ?? []) {
    if (!["results", "run", "any"].includes(entry.kind)) throw new TypeError(`Unknown script kind ${entry.kind}`);
    if (!Number.isInteger(entry.nth) || entry.nth < 1)
      throw new TypeError("Expected script `nth` to be an integer ≥ 1");
    if (!SCRIPT_ANSWERS.has(entry.respond)) throw new TypeError(`Unknown script answer ${entry.respond}`);
  }
}

/**
 * @param {FaultPlan} plan
 * @param {number} seed
 */
export function createFaults(plan, seed) {
  const random = seededRandom(seed);
  const counts = { run: 0, results: 0, any: 0 };

  function scripted(kind) {
    for (const entry of plan.script ?? []) {
      if (entry.kind !== "any" && entry.kind !== kind) continue;
      const n = counts[entry.kind];
      if (n >= entry.nth && n < entry.nth + (entry.count ?? 1)) {
        const delayMs = entry.respond === "slow" ? (entry.ms ?? plan.slowMs ?? 1000) : 0;
        return { respond: entry.respond, retryAfter: entry.retryAfter ?? plan.retryAfter ?? null, delayMs };
      }
    }
    return null;
  }

  // One draw per request, always, so enabling one rate doesn't reshuffle the others' dice.
  function drawn() {
    const roll = random();
    const pick = random();
    const slowRoll = random();
    const slow = plan.slowMs && (plan.slowRate === undefined || slowRoll < plan.slowRate) ? plan.slowMs : 0;
    const bands = [
      ["drop", plan.dropRate],
      [429, plan.rate429],
      [SERVER_ERRORS[Math.floor(pick * SERVER_ERRORS.length)], plan.rate5xx],
      ["malformed", plan.malformedRate],
    ];
    let edge = 0;
    for (const [respond, rate] of bands) {
      edge += rate ?? 0;
      if (roll < edge) return { respond, retryAfter: plan.retryAfter ?? null, delayMs: slow };
    }
    return { respond: null, retryAfter: null, delayMs: slow };
  }

  return {
    /**
     * The fault for the next request of `kind` to this job.
     * @param {"run" | "results"} kind
     * @returns {Fault}
     */
    decide(kind) {
      counts[kind] += 1;
      counts.any += 1;
      const base = drawn();
      return scripted(kind) ?? base;
    },
    /** A non-terminal status to report instead of "running" when the plan flaps. */
    flapStatus() {
      return FLAP_STATUSES[Math.floor(random() * FLAP_STATUSES.length)];
    },
    duplicateRows: Math.max(0, Math.floor(plan.duplicateRows ?? 0)),
    wrongCredentials: Boolean(plan.wrongCredentials),
    rateLimitReset: plan.rateLimitReset ?? null,
    flaps: Boolean(plan.flapStatus),
  };
}
