// Size check: what a page downloads to poll one run with default options. Not read from the
// import graph but watched: headless Chromium opens a page that imports the package's "browser"
// export and polls one run of the simulator to its end with default options, and every file the
// page fetches from the package is counted (the entry, the wasm, anything loaded on the way).
// Each file is compressed on its own as a server sends it: gzip -9 (the check) and brotli 11
// (what CDNs serve). Fails above LIMIT_KB gzip; writes the figures to test-results/size.json.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { StepError, cli, isMain, root } from "./exec.mjs";

const KB = 1000; // decimal kilobytes: the stricter reading of "45 KB"
/** DESIGN §6: what a page downloads, gzipped: the limit and the goal. */
const LIMIT_KB = 45;
const GOAL_KB = 40;
export const SIZE_REPORT = "test-results/size.json";
/** The folders of the package whose files a page may download. */
const SHIPPED = ["pkg", "dist"];

/** The module a browser loads first: the package's "browser" export. */
function browserEntry() {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const target = pkg.exports?.["."]?.browser;
  return typeof target === "string" ? path.normalize(target) : null;
}

function compressed(file) {
  const bytes = readFileSync(path.join(root, file));
  const gzip = gzipSync(bytes, { level: constants.Z_BEST_COMPRESSION }).length;
  const brotli = brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  }).length;
  return { file, raw: bytes.length, gzip, brotli };
}

const sum = (files, key) => files.reduce((total, f) => total + f[key], 0);
const group = (files) => ({ files, raw: sum(files, "raw"), gzip: sum(files, "gzip"), brotli: sum(files, "brotli") });
const kb = (bytes) => `${(bytes / KB).toFixed(1)} KB`;

/** The page: the browser export, one JobPoller with default options, to the run's end. */
const page = (entry, jobUid) => `<!doctype html><meta charset="utf-8"><script type="module">
import { JobPoller } from "/${entry.split(path.sep).join("/")}";
const poller = new JobPoller({ jobUid: ${JSON.stringify(jobUid)}, baseUrl: location.origin + "/v3", apiKey: "sim-key", projectId: "sim-project" });
window.outcome = poller.start().then((summary) => summary.status, (error) => error.code ?? String(error));
</script>`;

/**
 * The package's files a page fetched while it polled one finished run to its end, in the
 * order asked. The run has ended before the page opens, so no interval is waited for.
 */
async function downloaded(entry) {
  // The demo server and Chromium: imported here so that `npm run build` needs neither.
  const { startDemoServer } = await import("./demo-server.mjs");
  const { launchBrowser } = await import("./chromium.mjs");
  const server = await startDemoServer({ port: 0, wwwDir: root });
  const browser = await launchBrowser();
  try {
    const { jobUid } = server.sim.createJob({ rows: 20, inputs: 1 });
    server.sim.finish(jobUid);
    const tab = await browser.newPage();
    const files = [];
    tab.on("request", (request) => {
      const { pathname } = new URL(request.url());
      const file = path.normalize(decodeURIComponent(pathname.slice(1)));
      if (SHIPPED.some((dir) => file.startsWith(dir + path.sep)) && !files.includes(file)) files.push(file);
    });
    await tab.route("**/size-check.html", (route) => route.fulfill({ contentType: "text/html", body: page(entry, jobUid) }));
    await tab.goto(`${server.url}size-check.html`);
    // A bound for a broken build only: the run has ended, one status read and one page end it.
    let timer;
    const stuck = new Promise((resolve) => (timer = setTimeout(resolve, 60_000, "nothing within 60 s")));
    const outcome = await Promise.race([tab.evaluate(() => window.outcome), stuck]).finally(() => clearTimeout(timer));
    if (outcome !== "finished") throw new StepError("size", `the page's poller ended with ${outcome}, not "finished"`);
    return files;
  } finally {
    await browser.close();
    await server.close();
  }
}

/** Shipped files the page never downloaded (framework bindings, the whole module, …). */
function notDownloaded(files) {
  return SHIPPED.flatMap((dir) =>
    existsSync(path.join(root, dir)) ? readdirSync(path.join(root, dir)).map((name) => path.join(dir, name)) : [],
  ).filter((file) => /\.(js|wasm)$/.test(file) && !files.includes(file));
}

/** Sizes of what a page downloads to poll one run, grouped as wasm / JS. */
export async function measure() {
  const entry = browserEntry();
  if (entry === null || !existsSync(path.join(root, entry))) {
    throw new StepError("size", `the "browser" export (${entry ?? "none"}) is missing: run \`npm run build\` first`);
  }
  const files = await downloaded(entry);
  const wasm = group(files.filter((f) => f.endsWith(".wasm")).map(compressed));
  const js = group(files.filter((f) => !f.endsWith(".wasm")).map(compressed));
  if (wasm.files.length === 0) throw new StepError("size", "the page polled a run without downloading a .wasm: what did it run?");
  return {
    unit: "bytes (KB = 1000 bytes), each file compressed alone: gzip -9, brotli 11",
    entry,
    wasm,
    js,
    notCounted: notDownloaded(files),
    total: wasm.gzip + js.gzip,
    totalBrotli: wasm.brotli + js.brotli,
    limit: LIMIT_KB * KB,
    target: GOAL_KB * KB,
  };
}

/** What the check prints: the total, its parts, the limit and the goal, what is not counted. */
export function summary(m) {
  const part = (name, g) => `${name} ${kb(g.gzip)} / ${kb(g.brotli)} (${kb(g.raw)} raw)`;
  const lines = [
    `size: ${kb(m.total)} gzip, ${kb(m.totalBrotli)} brotli — what a page downloads to poll one run ` +
      `(limit ${LIMIT_KB} KB gzip: ${m.total > m.limit ? "EXCEEDED" : "met"}; goal ${GOAL_KB} KB: ` +
      `${m.total > m.target ? `not met, ${kb(m.total - m.target)} over` : "met"})`,
    `  gzip / brotli: ${part("wasm", m.wasm)} + ${part("JS", m.js)}`,
    `  downloaded: ${[...m.js.files, ...m.wasm.files].map((f) => `${f.file} ${kb(f.gzip)}`).join(", ")}`,
  ];
  if (m.notCounted.length > 0) lines.push(`  not downloaded by that page: ${m.notCounted.join(", ")}`);
  return lines.join("\n");
}

/** What `npm run build` prints: each shipped file, compressed alone (no page, no check). */
export function listing(files) {
  return files
    .map(compressed)
    .map((f) => `  ${f.file}: ${kb(f.raw)} raw, ${kb(f.gzip)} gzip, ${kb(f.brotli)} brotli`)
    .join("\n");
}

/** Measure, print, record, and fail above the limit. */
export async function checkSize() {
  const m = await measure();
  console.log(summary(m));
  mkdirSync(path.join(root, path.dirname(SIZE_REPORT)), { recursive: true });
  writeFileSync(path.join(root, SIZE_REPORT), `${JSON.stringify(m, null, 2)}\n`);
  if (m.total > m.limit) {
    throw new StepError("size", `${kb(m.total)} gzipped exceeds the ${LIMIT_KB} KB limit (docs/size.md)`);
  }
  return m;
}

if (isMain(import.meta.url)) cli(checkSize);
