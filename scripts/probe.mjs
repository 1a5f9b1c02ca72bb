// `npm run probe`: asks a live Captain Data API what DESIGN §1 leaves open (docs/api-assumptions.md)
// and prints what it answered, as a table. Read-only except when asked to schedule a tiny run.
//
//   CAPTAINDATA_API_KEY=… CAPTAINDATA_PROJECT_ID=… npm run probe -- <job_uid> [<workflow_uid>]
//
// Environment: CAPTAINDATA_API_KEY, CAPTAINDATA_PROJECT_ID (required); CAPTAINDATA_JOB_UID and
// CAPTAINDATA_WORKFLOW_UID (instead of the arguments); CAPTAINDATA_BASE_URL (default
// https://api.captaindata.co/v3); CAPTAINDATA_SCHEDULE_BODY (JSON body of the schedule call; default
// one empty input); PROBE_WAIT_MS (how long to follow a scheduled run, default 120000),
// PROBE_POLL_MS (its status cadence, default 3000), PROBE_MAX_PAGES (default 50). `--json` also
// prints the findings as JSON. The API key is sent only in the Authorization header and is
// replaced by "[API key]" wherever an answer would echo it.
//
// With CAPTAINDATA_V4_API_KEY it also asks the v4 API (scripts/probe-v4.mjs says which
// settings and what it checks); with only a v4 key, only v4 is asked.
import { cli, isMain } from "./exec.mjs";
import { probeV4, probeV4Config } from "./probe-v4.mjs";

const DEFAULT_BASE_URL = "https://api.captaindata.co/v3";
const PROBE_ORIGIN = "https://captaindata-poller-probe.example";
const WRONG_PROJECT = "captaindata-poller-probe-wrong-project";
const MISSING_JOB = "captaindata-poller-probe-no-such-job";
const TERMINAL = new Set(["finished", "completed", "warning", "shutdown", "stopped"]);
const TEXT_LIMIT = 160;

class ProbeError extends Error {}

/** The probe's settings from arguments and environment; throws a ProbeError naming what is missing. */
export function probeConfig(argv = process.argv.slice(2), env = process.env) {
  const positional = argv.filter((a) => !a.startsWith("--"));
  let v4;
  try {
    v4 = probeV4Config(env);
  } catch (error) {
    throw new ProbeError(error.message);
  }
  const config = {
    apiKey: env.CAPTAINDATA_API_KEY ?? "",
    projectId: env.CAPTAINDATA_PROJECT_ID ?? "",
    baseUrl: (env.CAPTAINDATA_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, ""),
    jobUid: positional[0] || env.CAPTAINDATA_JOB_UID || "",
    workflowUid: positional[1] || env.CAPTAINDATA_WORKFLOW_UID || "",
    scheduleBody: env.CAPTAINDATA_SCHEDULE_BODY,
    waitMs: Number(env.PROBE_WAIT_MS ?? 120000),
    pollMs: Number(env.PROBE_POLL_MS ?? 3000),
    maxPages: Number(env.PROBE_MAX_PAGES ?? 50),
    json: argv.includes("--json"),
    v4,
    // A v4 key alone asks v4 only.
    v3: !(v4 && !env.CAPTAINDATA_API_KEY),
  };
  if (!config.v3) return config;
  for (const [name, value] of [["CAPTAINDATA_API_KEY", config.apiKey], ["CAPTAINDATA_PROJECT_ID", config.projectId]]) {
    if (!value) throw new ProbeError(`${name} is not set`);
  }
  if (!config.jobUid && !config.workflowUid) {
    throw new ProbeError("give a job uid (argument or CAPTAINDATA_JOB_UID) and/or a workflow uid to schedule a tiny run");
  }
  let body = { job_name: "captaindata-poller probe", steps: [], inputs: [{}] };
  if (config.scheduleBody) {
    try {
      body = JSON.parse(config.scheduleBody);
    } catch {
      throw new ProbeError("CAPTAINDATA_SCHEDULE_BODY is not JSON");
    }
  }
  config.scheduleBody = body;
  return config;
}

/** One HTTP exchange, summarised: status, parsed body (or text), the headers worth reporting. */
async function exchange(config, path, { method = "GET", headers, body, url } = {}) {
  const target = url ?? `${config.baseUrl}${path}`;
  const init = {
    method,
    headers: headers ?? { authorization: `x-api-key ${config.apiKey}`, "x-project-id": config.projectId },
    signal: AbortSignal.timeout(20000),
  };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, "content-type": "application/json" };
  }
  try {
    const res = await fetch(target, init);
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const picked = {};
    for (const [name, value] of res.headers) {
      if (/^(retry-after|x-ratelimit-.*|access-control-.*)$/.test(name)) picked[name] = value;
    }
    return { status: res.status, json, text, headers: picked };
  } catch (error) {
    return { status: 0, error: String(error?.cause?.code ?? error?.message ?? error) };
  }
}

/** A short, key-free rendering of an answer. */
function shown(config, answer) {
  if (answer.status === 0) return `no answer (${answer.error})`;
  const text = (answer.text ?? "").replace(/\s+/g, " ").trim();
  const clipped = text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT)}…` : text;
  return `${answer.status} ${clipped || "(empty body)"}`;
}

/** What form `paging.next` takes, in the words of docs/api-assumptions.md. */
export function nextForm(next, baseUrl) {
  if (next === null || next === undefined) return "null";
  if (typeof next === "number") return "page number (JSON number)";
  if (typeof next !== "string") return `unexpected ${typeof next}`;
  if (/^\d+$/.test(next)) return "page number (numeric string)";
  if (next.startsWith("?")) return "query string";
  if (next.startsWith("/")) return "path";
  try {
    const url = new URL(next);
    return url.origin === new URL(baseUrl).origin ? "absolute URL (same origin)" : `absolute URL (other origin ${url.origin})`;
  } catch {
    return "unusable string";
  }
}

/** The URL of the page `next` names (same origin only), or null. */
function nextUrl(next, resultsUrl) {
  if (typeof next === "number" || (typeof next === "string" && /^\d+$/.test(next))) return `${resultsUrl}?page=${next}`;
  if (typeof next !== "string" || next === "") return null;
  if (next.startsWith("?")) return `${resultsUrl}${next}`;
  try {
    const url = new URL(next, resultsUrl);
    return url.origin === new URL(resultsUrl).origin ? url.href : null;
  } catch {
    return null;
  }
}

const rowsOf = (answer) => (Array.isArray(answer.json?.results) ? answer.json.results : null);
const errorKeys = (answer) =>
  answer.status >= 400 && answer.json && typeof answer.json === "object" ? Object.keys(answer.json).join(", ") : null;

/** Reads every results page by following `paging.next`: rows, pages, the first page. */
async function readAll(config, jobUid) {
  const resultsUrl = `${config.baseUrl}/jobs/${encodeURIComponent(jobUid)}/results`;
  const pages = [];
  let url = resultsUrl;
  while (url && pages.length < config.maxPages) {
    const answer = await exchange(config, "", { url });
    pages.push(answer);
    if (answer.status !== 200 || !rowsOf(answer)) break;
    url = answer.json.paging?.have_next_page ? nextUrl(answer.json.paging.next, resultsUrl) : null;
  }
  const rows = pages.flatMap((p) => rowsOf(p) ?? []);
  return { pages, rows, resultsUrl, truncated: Boolean(url) };
}

/** Follows a run's status for up to `waitMs`: the statuses seen, in order, and the last answer. */
async function followStatus(config, jobUid, seen) {
  const deadline = Date.now() + config.waitMs;
  let last;
  for (;;) {
    last = await exchange(config, `/jobs/${encodeURIComponent(jobUid)}`);
    const status = last.json?.status;
    if (typeof status === "string" && seen.at(-1) !== status) seen.push(status);
    if (last.status !== 200 || TERMINAL.has(String(status).toLowerCase()) || Date.now() >= deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, config.pollMs));
  }
}

/** Runs every probe (v3, v4 or both); resolves with `[open point, what the API answered]` rows. */
export async function probe(config) {
  const findings = config.v3 ? await probeV3(config) : [];
  if (config.v4) {
    const shownV4 = (answer) => redact({ apiKey: config.v4.apiKey }, shown(config, answer));
    findings.push(...(await probeV4(config.v4, { exchange: (path, init) => exchange(config, path, init), shown: shownV4, waitMs: config.waitMs, pollMs: config.pollMs })));
  }
  return findings;
}

/** The v3 probes. */
async function probeV3(config) {
  const findings = [];
  const note = (point, answer) => findings.push([point, answer]);
  const statuses = new Map();
  const errorShapes = new Set();
  const rateHeaders = new Set();
  const watch = (answer) => {
    const keys = errorKeys(answer);
    if (keys) errorShapes.add(`{${keys}}`);
    for (const name of Object.keys(answer.headers ?? {})) if (!name.startsWith("access-control-")) rateHeaders.add(name);
    return answer;
  };

  let scheduled = null;
  const scheduledSeen = [];
  if (config.workflowUid) {
    const launch = watch(await exchange(config, `/workflows/${encodeURIComponent(config.workflowUid)}/schedule`, { method: "POST", body: config.scheduleBody }));
    note("schedule a tiny run", shown(config, launch));
    scheduled = typeof launch.json?.job_uid === "string" ? launch.json.job_uid : null;
    if (scheduled) {
      // At once, while the run is most likely still pending.
      const run = watch(await exchange(config, `/jobs/${encodeURIComponent(scheduled)}`));
      const results = watch(await exchange(config, `/jobs/${encodeURIComponent(scheduled)}/results`));
      const status = run.json?.status;
      if (typeof status === "string") scheduledSeen.push(status);
      note("/results right after scheduling", `${shown(config, results)} (the run: ${run.status} status ${JSON.stringify(status ?? null)})`);
    }
  } else {
    note("schedule a tiny run", "not asked (give a workflow uid to see /results while pending)");
  }

  const jobUid = config.jobUid || scheduled;
  if (config.jobUid) {
    const run = watch(await exchange(config, `/jobs/${encodeURIComponent(jobUid)}`));
    if (typeof run.json?.status === "string") statuses.set(jobUid, [run.json.status]);
    note("GET /jobs/{uid}", run.status === 200 ? `200 status ${JSON.stringify(run.json.status)}` : shown(config, run));
    await probePaging(config, jobUid, run, note, watch);
  }

  if (scheduled) {
    const last = watch(await followStatus(config, scheduled, scheduledSeen));
    statuses.set(scheduled, scheduledSeen);
    if (!config.jobUid) {
      note("GET /jobs/{uid} (the scheduled run)", last.status === 200 ? `200 status ${JSON.stringify(last.json.status)}` : shown(config, last));
      await probePaging(config, scheduled, last, note, watch);
    }
  }

  const wrongProject = watch(await exchange(config, `/jobs/${encodeURIComponent(jobUid)}`, {
    headers: { authorization: `x-api-key ${config.apiKey}`, "x-project-id": WRONG_PROJECT },
  }));
  note("wrong project id", shown(config, wrongProject));
  note("unknown job uid", shown(config, watch(await exchange(config, `/jobs/${MISSING_JOB}`))));

  const preflight = await exchange(config, `/jobs/${encodeURIComponent(jobUid)}/results`, {
    method: "OPTIONS",
    headers: { origin: PROBE_ORIGIN, "access-control-request-method": "GET", "access-control-request-headers": "authorization, x-project-id" },
  });
  const allowOrigin = preflight.headers?.["access-control-allow-origin"];
  note(
    "CORS preflight (OPTIONS with an Origin)",
    preflight.status === 0
      ? shown(config, preflight)
      : `${preflight.status}, Access-Control-Allow-Origin ${allowOrigin ? JSON.stringify(allowOrigin) : "absent"}, ` +
          `Access-Control-Allow-Headers ${JSON.stringify(preflight.headers["access-control-allow-headers"] ?? null)}`,
  );
  note(
    "statuses seen",
    [...statuses].map(([uid, list]) => `${uid === scheduled ? "scheduled run" : "job"}: ${list.join(" → ") || "none"}`).join("; ") || "none",
  );
  note("error body keys", [...errorShapes].join(" | ") || "no error body seen");
  note("rate-limit headers seen", [...rateHeaders].join(", ") || "none");
  return findings.map(([point, answer]) => [point, redact(config, answer)]);
}

/** Paging, page size, page numbering and counts of one run. */
async function probePaging(config, jobUid, run, note, watch) {
  const { pages, rows, resultsUrl, truncated } = await readAll(config, jobUid);
  pages.forEach(watch);
  const first = pages[0];
  const firstRows = rowsOf(first);
  if (!firstRows) {
    note("GET /jobs/{uid}/results", shown(config, first));
    return;
  }
  const paging = first.json.paging ?? {};
  note("paging.next", `${nextForm(paging.next, config.baseUrl)}: ${JSON.stringify(paging.next ?? null)}`);
  note(
    "page size",
    paging.have_next_page ? String(firstRows.length) : `≥ ${firstRows.length} (one page: have_next_page false)`,
  );
  const same = (a, b) => JSON.stringify(rowsOf(a)?.[0] ?? null) === JSON.stringify(b?.[0] ?? null);
  const [one, zero] = [await exchange(config, "", { url: `${resultsUrl}?page=1` }), await exchange(config, "", { url: `${resultsUrl}?page=0` })];
  const firstIs = [one, zero].map((a, i) => (a.status === 200 && firstRows.length > 0 && same(a, firstRows) ? `page=${1 - i}` : null)).filter(Boolean);
  note(
    "page numbering",
    `${firstIs.length ? `${firstIs.join(" and ")} is the first page` : "neither page=1 nor page=0 repeats the first page"} (page=1: ${one.status}, page=0: ${zero.status})`,
  );
  const distinct = new Set(rows.map((r) => JSON.stringify(r))).size;
  const count = run.json?.row_count;
  const total = run.json?.total_row_count;
  note(
    "row_count vs rows readable",
    `row_count ${JSON.stringify(count ?? null)}, total_row_count ${JSON.stringify(total ?? null)}; readable ${rows.length} in ${pages.length} page(s)` +
      `${distinct < rows.length ? `, ${rows.length - distinct} repeated` : ""}${truncated ? ` (stopped at PROBE_MAX_PAGES=${config.maxPages})` : ""}; ` +
      `status then ${JSON.stringify(run.json?.status ?? null)}`,
  );
}

function redact(config, text) {
  return config.apiKey ? String(text).split(config.apiKey).join("[API key]") : String(text);
}

/** The findings as a Markdown table. */
export function table(findings) {
  const cell = (s) => String(s).replace(/\|/g, "\\|").replace(/\n/g, " ");
  return ["| open point | what the API answered |", "| --- | --- |", ...findings.map(([a, b]) => `| ${cell(a)} | ${cell(b)} |`)].join("\n");
}

async function main() {
  let config;
  try {
    config = probeConfig();
  } catch (error) {
    if (!(error instanceof ProbeError)) throw error;
    console.error(
      `probe: ${error.message}\nusage: CAPTAINDATA_API_KEY=… CAPTAINDATA_PROJECT_ID=… npm run probe -- <job_uid> [<workflow_uid>]` +
        "\n   or: CAPTAINDATA_V4_API_KEY=… [CAPTAINDATA_V4_ACTION=…] [CAPTAINDATA_V4_RUN_UID=…] npm run probe",
    );
    process.exit(1);
  }
  const targets = [config.v3 ? config.baseUrl : null, config.v4?.baseUrl].filter(Boolean).join(" and ");
  console.log(`captaindata-poller probe of ${targets} at ${new Date().toISOString()}\n`);
  const findings = await probe(config);
  console.log(table(findings));
  if (config.json) console.log(`\n${JSON.stringify(Object.fromEntries(findings), null, 2)}`);
}

if (isMain(import.meta.url)) cli(main);
