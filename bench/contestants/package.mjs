// Where the library contestants load the package from: this checkout, or the package root
// named by BENCH_PACKAGE (another checkout's build, to compare two builds on the same runs).
import path from "node:path";
import { pathToFileURL } from "node:url";

/** The package root's URL (ends with `/`). */
export const PACKAGE_ROOT = process.env.BENCH_PACKAGE
  ? pathToFileURL(`${path.resolve(process.env.BENCH_PACKAGE)}/`)
  : new URL("../../", import.meta.url);

/**
 * The package's Node entry: `{ JobPoller, pollStep, … }`, its wasm already compiled (≈30 ms
 * on the first poller otherwise: 3 s of API time at a 1/100 scale, before its first request).
 */
export async function loadPackage() {
  const entry = await import(new URL("js/node.js", PACKAGE_ROOT).href);
  await entry.preload?.();
  return entry;
}
