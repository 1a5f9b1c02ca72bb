// The bench's targets as the report states them: the physical limit of each bursty workload
// (each row once, plus one re-read of each burst's partly filled page), and the ratio table's
// rows (bytes against that limit, p95 row delay against the every-tick reader, `pollStep`'s
// p95 CPU against a bare replay of its requests in Node and in workerd) from a small
// synthetic report, met and not met.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PHYSICAL_LIMIT_WORKLOADS, STEP_CPU_RATIO, physicalLimit, targetRatios } from "../bench/ratios.mjs";
import { targets } from "../bench/report.mjs";
import { INTERVAL_MS, WORKLOADS } from "../bench/workloads.mjs";

const spec = (id) => WORKLOADS.find((w) => w.id === id).spec;
const fmt = { mb: (b) => `${b} B`, num: String, secs: (ms) => String(ms / 1000) };

describe("physical limit of a bursty run", () => {
  test("bursty and bursty-100 (100-row bursts into 1000-row pages): 5.5× the rows' bytes", () => {
    assert.deepEqual(PHYSICAL_LIMIT_WORKLOADS, ["bursty", "bursty-100"]);
    for (const id of PHYSICAL_LIMIT_WORKLOADS) {
      const { rows, pageSize, arrival } = spec(id);
      assert.equal(rows / arrival.bursts, 100, `${id}: bursts of 100 rows`);
      assert.equal(pageSize, 1000, `${id}: pages of 1000`);
      assert.equal(physicalLimit(spec(id)), 5.5, id);
    }
  });

  test("bursty-100's bursts are further apart than six intervals (the quiet ticks' override)", () => {
    const { durationMs, arrival } = spec("bursty-100");
    assert.ok(durationMs / arrival.bursts > 6 * INTERVAL_MS);
  });

  test("counts the page as it stood before each burst: 3 bursts of 100 re-read 0 + 100 + 200 rows", () => {
    assert.equal(physicalLimit({ rows: 300, pageSize: 1000, arrival: { bursts: 3 } }), 2);
    // Bursts of 500 into pages of 1000: the second burst re-reads 500 rows, the third none.
    assert.equal(physicalLimit({ rows: 1500, pageSize: 1000, arrival: { bursts: 3 } }), 2000 / 1500);
    assert.equal(physicalLimit({ rows: 300, pageSize: 1000, arrival: "linear" }), null);
  });
});

/** A contestant's result with the figures the ratio table reads. */
function result(workload, contestant, { bytesPerRowByte = 1, p95 = 10_000, vsBare } = {}) {
  const rows = { expected: 100, delivered: 100, lost: 0, duplicated: 0, outOfOrder: 0, exactlyOnce: true };
  const step = vsBare && { vsBare, cpuMs: { p50: 1, p95: 2, max: 3 }, rounds: 10, meanCpuMs: 1 };
  return { workload, contestant, label: contestant, jobs: 1, rows, errors: {}, completed: 1, requests: { total: 10, run: 5, results: 5 }, bytes: { total: 1000, run: 100, results: 900 }, bytesPerRowByte, rowDelayMs: { p50: p95 / 2, p95, max: p95 }, completionDelayMs: { p50: 0, p95: 0, max: 0 }, cpuMs: 1, cpuMsPer10kRows: null, cpuMsPerTick: 1, step };
}

const against = (roundP95, bareP95) => ({
  roundMs: { p50: roundP95 / 2, p95: roundP95, max: roundP95 },
  bareMs: { p50: bareP95 / 2, p95: bareP95, max: bareP95 },
  ratioP95: roundP95 / bareP95,
  packageOwnMs: { p50: 0.2, p95: 0.6, max: 1 },
});

/** bursty within every target; bursty-100 over the limit and later than the every-tick reader; workerd's pollStep over its ratio. */
const REPORT = {
  workloads: PHYSICAL_LIMIT_WORKLOADS.map((id) => ({ id, spec: spec(id) })),
  results: [
    result("bursty", "library", { bytesPerRowByte: 6.0, p95: 10_500 }),
    result("bursty", "incremental", { bytesPerRowByte: 35, p95: 10_000 }),
    result("bursty", "library-step", { vsBare: against(4.4, 4) }),
    result("bursty", "library-step-workerd", { vsBare: against(3.75, 3) }),
    result("bursty-100", "library", { bytesPerRowByte: 6.67, p95: 12_000 }),
    result("bursty-100", "incremental", { bytesPerRowByte: 30, p95: 10_000 }),
  ],
};

describe("the ratio table", () => {
  const rows = targetRatios(REPORT, fmt);
  const row = (workload, pattern) => {
    const found = rows.filter((r) => r.workload === workload && pattern.test(r.figure));
    assert.equal(found.length, 1, `one row for ${workload} ${pattern}`);
    return found[0];
  };

  test("bytes against the physical limit on both bursty workloads, ≤ 1.15×", () => {
    const bursty = row("bursty", /physical limit/);
    assert.equal(bursty.ratio, 6.0 / 5.5);
    assert.equal(bursty.target, "≤ 1.15×");
    assert.equal(bursty.ok, true);
    const b100 = row("bursty-100", /physical limit/);
    assert.ok(Math.abs(b100.ratio - 6.67 / 5.5) < 1e-12);
    assert.equal(b100.ok, false);
  });

  test("p95 row delay against the every-tick reader on both, ≤ 1.1×", () => {
    const bursty = row("bursty", /p95 row delay vs the every-tick reader/);
    assert.equal(bursty.ratio, 1.05);
    assert.equal(bursty.ok, true);
    const b100 = row("bursty-100", /p95 row delay vs the every-tick reader/);
    assert.equal(b100.ratio, 1.2);
    assert.equal(b100.ok, false);
  });

  test("pollStep's p95 CPU against a bare replay, in Node and in workerd, ≤ 1.2×", () => {
    assert.equal(STEP_CPU_RATIO, 1.2);
    const node = row("bursty", /pollStep.*in Node/);
    assert.equal(node.ratio, 1.1);
    assert.equal(node.ok, true);
    assert.equal(node.value, "4.40 ms");
    assert.equal(node.reference, "4.00 ms");
    const workerd = row("bursty", /pollStep.*in workerd/);
    assert.equal(workerd.ratio, 1.25);
    assert.equal(workerd.ok, false);
  });

  test("a workload or a contestant missing from the run makes no row", () => {
    const onlyBursty = { ...REPORT, results: REPORT.results.filter((r) => r.workload === "bursty" && r.contestant !== "library-step-workerd") };
    const figures = targetRatios(onlyBursty, fmt).map((r) => `${r.workload}: ${r.figure.split(" (")[0]}`);
    assert.deepEqual(figures, ["bursty: bytes vs the physical limit", "bursty: p95 row delay vs the every-tick reader", "bursty: `pollStep` p95 CPU per round vs a bare replay of its requests, in Node"]);
  });
});

describe("the report's targets", () => {
  const listed = targets(REPORT, null);
  const find = (pattern) => listed.filter((t) => pattern.test(t.name));

  test("the physical limit is a target on both bursty workloads, met or not", () => {
    assert.deepEqual(find(/physical limit/).map((t) => t.ok), [true, false]);
  });

  test("pollStep's ratio is a target in both runtimes, with the package's own p50 / p95; no budget in milliseconds", () => {
    const step = find(/pollStep in .*bare replay/);
    assert.deepEqual(step.map((t) => [t.name.match(/in (\w+)\)/)[1], t.ok]), [["workerd", false], ["Node", true]]);
    for (const t of step) assert.match(t.detail, /own p50 \/ p95 0\.20 \/ 0\.60 ms/);
    for (const t of listed) assert.doesNotMatch(t.name, /≤ \d+ ms/);
  });
});
