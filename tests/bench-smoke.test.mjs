// The bench cannot rot: the small workload for every contestant (two trials, started half an
// interval apart, instead of the bench's twelve), over HTTP against the simulator, must
// deliver every row exactly once for the library and the hand-written incremental poller,
// lose rows for nobody else that claims to be correct, and write the table, the raw JSON and
// the chart. No timing is asserted.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { runBench } from "../bench/run.mjs";
import { CONTESTANTS, plays } from "../bench/contestants/index.mjs";

describe("bench smoke (small workload)", () => {
  const outDir = mkdtempSync(path.join(tmpdir(), "bench-smoke-"));
  let report;

  before(async () => {
    report = await runBench({ workloads: ["small"], trials: 2, outDir, print: false, log: () => {} });
  });
  after(() => rmSync(outDir, { recursive: true, force: true }));

  const result = (id) => report.results.find((r) => r.contestant === id);
  const playing = CONTESTANTS.filter((c) => plays(c, "small"));

  test("every contestant ran the small workload against the simulator", () => {
    assert.deepEqual(report.results.map((r) => r.contestant), playing.map((c) => c.id));
    for (const r of report.results) assert.ok(r.requests.results > 0, `${r.contestant} read no results`);
  });

  for (const id of ["library", "library-step", "library-step-workerd", "incremental"]) {
    test(`${id}: every row of both runs exactly once, in order, and completion reported`, () => {
      const r = result(id);
      assert.equal(r.trials, 2);
      assert.equal(r.rows.expected, 100);
      assert.deepEqual(
        { delivered: r.rows.delivered, lost: r.rows.lost, duplicated: r.rows.duplicated, outOfOrder: r.rows.outOfOrder },
        { delivered: 100, lost: 0, duplicated: 0, outOfOrder: 0 },
      );
      assert.equal(r.completed, 2);
      assert.deepEqual(r.errors, {});
    });
  }

  test("the table, the raw JSON and the chart are written", () => {
    const table = readFileSync(path.join(outDir, "latest.md"), "utf8");
    for (const c of playing) assert.ok(table.includes(`| small | ${c.label} |`), `no table row for ${c.label}`);
    const json = JSON.parse(readFileSync(path.join(outDir, "latest.json"), "utf8"));
    assert.equal(json.results.length, playing.length);
    assert.ok(json.machine.cores > 0);
    assert.ok(existsSync(path.join(outDir, "latest.svg")));
    assert.match(readFileSync(path.join(outDir, "latest.svg"), "utf8"), /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });
});
