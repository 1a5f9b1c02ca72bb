// A chaos campaign: randomized runs of the built package against the simulator over HTTP.
// Fetch-API only (no node: imports), so the same campaign runs in Node (`npm run chaos`) and in
// a page in Chromium (./index.html, which tests/demo/chaos.test.mjs opens). Each run draws a job (size, paging form,
// statuses, lag, bursts, outcome) and a fault plan from its seed, polls it with a first poller
// that is stopped mid-run, then resumes with a second one (a JobPoller, or a pollStep loop as a
// cron would) from the first one's cursor, and checks what the user got.

const OUTCOMES = [
  ["finished", 35],
  ["completed", 15],
  ["warning", 15],
  ["shutdown", 10],
  ["stopped", 10],
  ["allInputsFailed", 15],
];
const SUCCESS = new Set(["finished", "completed", "warning"]);
const NEXT_FORMS = ["url", "path", "query", "page", "pageString"];
const WEBHOOK_KINDS = ["created", "succeeded", "failed", "unknown", "otherJob"];
const WEBHOOK_MESSAGES = {
  created: "Job successfully created.",
  succeeded: "Job successfully finished.",
  failed: "Job failed.",
  unknown: "Job did something new.",
};

/** mulberry32: a small seeded PRNG (the campaign must replay from its seed alone). */
export function random(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    chance: (p) => next() < p,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
    weighted(pairs) {
      const total = pairs.reduce((s, [, w]) => s + w, 0);
      let roll = next() * total;
      for (const [value, w] of pairs) if ((roll -= w) < 0) return value;
      return pairs[pairs.length - 1][0];
    },
  };
}

/** The job and fault plan of one run (everything the simulator needs), drawn from its seed. */
export function drawJob(r) {
  const big = r.chance(0.08); // real 1000-row pages, several of them
  const pageSize = big ? 1000 : r.pick([1, 3, 7, 10, 25, 50, 100]);
  // At most 80 pages: a run stays a fraction of a second of work even with slow answers.
  const rows = big ? r.int(1001, 3500) : r.chance(0.05) ? 0 : r.int(1, Math.min(400, pageSize * 80));
  const faults = {};
  if (r.chance(0.6)) faults.rate429 = r.pick([0.02, 0.05, 0.1, 0.2]);
  if (faults.rate429) faults.retryAfter = r.pick([0, 0, 1, "date", null]);
  if (faults.rate429 && r.chance(0.3)) faults.rateLimitReset = r.pick(["delta", "epoch"]);
  if (r.chance(0.6)) faults.rate5xx = r.pick([0.02, 0.05, 0.1, 0.2]);
  if (r.chance(0.4)) faults.dropRate = r.pick([0.02, 0.05, 0.1]);
  if (r.chance(0.4)) faults.malformedRate = r.pick([0.02, 0.05, 0.1]);
  if (r.chance(0.3)) Object.assign(faults, { slowMs: r.pick([20, 60, 3000]), slowRate: r.pick([0.02, 0.05, 0.1]) });
  if (r.chance(0.3)) faults.flapStatus = true;
  if (r.chance(0.25)) faults.duplicateRows = r.int(1, Math.max(1, Math.min(5, pageSize - 1)));
  if (r.chance(0.15)) {
    faults.script = [{ kind: r.pick(["results", "run", "any"]), nth: r.int(1, 4), respond: r.pick([429, 500, 503, "drop", "malformed"]), count: r.int(1, 4) }];
  }
  const durationMs = r.int(40, big ? 900 : 600);
  return {
    rows,
    durationMs,
    pageSize,
    rowBytes: big ? 16 : r.pick([16, 64, 200]),
    inputs: r.int(1, 60),
    startDelayMs: r.chance(0.3) ? r.int(1, 150) : 0,
    outcome: r.weighted(OUTCOMES),
    nextForm: r.pick(NEXT_FORMS),
    pageBase: r.pick([0, 1]),
    statusCase: r.pick(["lower", "lower", "upper", "title"]),
    resultsWhilePending: r.chance(0.4) ? 404 : null,
    countLagMs: r.chance(0.4) ? r.int(10, 300) : 0,
    arrival: r.chance(0.35) ? { bursts: r.int(1, 5) } : "linear",
    errorShape: r.pick(["v3", "v4"]),
    faults,
  };
}

/** Poller options (scaled time) drawn from the run's seed. */
function drawOptions(r, job) {
  // Answers slower than the timeout (3 s) meet a short one: each costs 300 ms, not seconds.
  const timeoutMs = job.faults.slowMs > 1000 ? 300 : r.pick([300, 1000, 2000]);
  return {
    intervalMs: r.int(3, 40),
    statusEvery: r.int(1, 5),
    // Enough retries that a fault plan of ≤ 40 % bad answers never exhausts them by chance.
    retry: { retries: 30, minDelayMs: r.int(1, 5), maxDelayMs: r.int(15, 60) },
    timeoutMs,
    maxDurationMs: 60000,
    rowKey: job.faults.duplicateRows || r.chance(0.3) ? "id" : undefined,
  };
}

const hasKey = (value, key) => {
  if (value === undefined || value === null) return false;
  if (typeof value === "string") return value.includes(key);
  try {
    return JSON.stringify(value).includes(key);
  } catch {
    return String(value).includes(key);
  }
};

/** Every own property of an error (message, stack, code, cause…) as text. */
function errorText(error) {
  if (!error || typeof error !== "object") return String(error);
  const parts = [String(error.message), String(error.stack), String(error.cause)];
  for (const name of Object.getOwnPropertyNames(error)) parts.push(`${name}=${String(error[name])}`);
  return parts.join("\n");
}

/**
 * Installs a wrapper around `globalThis.fetch` (which the package looks up at call time) that
 * attributes each request to a client by its `x-chaos-client` header, and around `console`
 * to catch a key printed anywhere. Returns `{ calls, consoleText, restore }`.
 */
function instrument() {
  const realFetch = globalThis.fetch;
  const byClient = new Map();
  const urls = [];
  globalThis.fetch = function chaosFetch(input, init) {
    const url = typeof input === "string" ? input : input.url;
    const headers = new Headers(init?.headers ?? (typeof input === "object" ? input.headers : undefined));
    const client = headers.get("x-chaos-client");
    if (client) {
      urls.push(url);
      const list = byClient.get(client) ?? [];
      list.push({ url, at: Date.now() });
      byClient.set(client, list);
    }
    return realFetch.call(globalThis, input, init);
  };
  const printed = [];
  const originals = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    originals[level] = console[level];
    console[level] = (...args) => {
      printed.push(args.map((a) => (a instanceof Error ? errorText(a) : typeof a === "string" ? a : safeJson(a))).join(" "));
      originals[level].apply(console, args);
    };
  }
  // Messages between tabs (a tab-sharing layer posts rows and outcomes on a BroadcastChannel).
  const Channel = globalThis.BroadcastChannel;
  const realPost = Channel?.prototype.postMessage;
  if (Channel) {
    Channel.prototype.postMessage = function postMessage(message) {
      printed.push(`BroadcastChannel ${this.name}: ${safeJson(message)}`);
      return realPost.call(this, message);
    };
  }
  return {
    realFetch,
    byClient,
    urls,
    printed,
    restore() {
      globalThis.fetch = realFetch;
      Object.assign(console, originals);
      if (Channel) Channel.prototype.postMessage = realPost;
    },
  };
}

function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the promise's settlement, or `{ hang: true }` after `ms`. */
function within(promise, ms) {
  let timer;
  const bound = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ hang: true }), ms);
  });
  const settled = promise.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
  return Promise.race([settled, bound]).finally(() => clearTimeout(timer));
}

/**
 * Runs a campaign.
 * @param {{ JobPoller: Function, pollStep: Function, baseUrl: string, controlOrigin: string,
 *   apiKey: string, projectId: string, runs: number, seed: number, concurrency?: number,
 *   onFailure?: (failure: { seed: number, problems: string[] }) => void }} options
 *   `baseUrl` is the simulator's `/v3` URL, `controlOrigin` where its `/__sim` routes are.
 */
export async function runCampaign(options) {
  const { runs, seed, concurrency = 6 } = options;
  const probe = instrument();
  const totals = {
    runs: 0,
    rows: 0,
    faults: 0,
    requests: 0,
    lost: 0,
    duplicated: 0,
    requestsAfterEnd: 0,
    hangs: 0,
    keyLeaks: 0,
    outcomeErrors: 0,
    failures: [],
  };
  const started = Date.now();
  let nextRun = 0;
  const lane = async () => {
    while (nextRun < runs) {
      const runSeed = (seed + nextRun++) >>> 0;
      let result;
      try {
        result = await oneRun(runSeed, options, probe);
      } catch (error) {
        result = { rows: 0, faults: 0, requests: 0, lost: 0, duplicated: 0, requestsAfterEnd: 0, hangs: 0, keyLeaks: 0, outcomeErrors: 1, problems: [`campaign error: ${errorText(error)}`] };
      }
      totals.runs += 1;
      for (const k of ["rows", "faults", "requests", "lost", "duplicated", "requestsAfterEnd", "hangs", "keyLeaks", "outcomeErrors"]) totals[k] += result[k];
      if (result.problems.length > 0) {
        const failure = { seed: runSeed, problems: result.problems };
        totals.failures.push(failure);
        options.onFailure?.(failure);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, runs) }, lane));
  } finally {
    probe.restore();
  }
  // Anything printed (onCallbackError defaults to console.error) or posted to other tabs.
  const printedLeaks = probe.printed.filter((line) => line.includes(options.apiKey)).length;
  if (printedLeaks > 0) {
    totals.keyLeaks += printedLeaks;
    totals.failures.push({ seed, problems: [`the API key was printed or posted to other tabs ${printedLeaks} times`] });
  }
  totals.ms = Date.now() - started;
  return totals;
}

/** The line `npm test` prints and the README quotes. */
export function summaryLine(t, label = "chaos") {
  return `${label}: runs ${t.runs}, rows ${t.rows}, faults ${t.faults}, lost ${t.lost}, duplicated ${t.duplicated}, requests after end ${t.requestsAfterEnd}, hangs ${t.hangs}, key leaks ${t.keyLeaks}`;
}

/** True when the campaign found nothing wrong. */
export const clean = (t) =>
  t.lost + t.duplicated + t.requestsAfterEnd + t.hangs + t.keyLeaks + t.outcomeErrors === 0 && t.failures.length === 0;

async function control(probe, origin, path, body) {
  const res = await probe.realFetch.call(globalThis, `${origin}/__sim${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`simulator control ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** One run: draw, poll with A, stop A mid-run, resume with B from A's cursor, check. */

/** `onComplete` and `onError` of poller `name`: each checks its payload and records it in `rec`. */
function endRecorders(name, rec, check) {
  return {
    onComplete(summary) {
      check(`${name} summary`, summary);
      rec.completes.push(summary);
    },
    onError(error) {
      check(`${name} error`, errorText(error));
      rec.errors.push(error);
    },
  };
}
async function oneRun(runSeed, options, probe) {
  const { JobPoller, pollStep, baseUrl, controlOrigin, apiKey, projectId } = options;
  const r = random(runSeed);
  const job = drawJob(r);
  const jobUid = `chaos-${runSeed}`;
  await control(probe, controlOrigin, "/jobs", { ...job, jobUid });
  const opts = drawOptions(r, job);
  const problems = []; // lost, duplicated, late requests, hangs, leaks
  const wrong = []; // outcome errors: wrong or repeated outcome, order, cursor, webhooks
  const leakPlaces = [];
  const check = (place, value) => {
    if (hasKey(value, apiKey)) leakPlaces.push(place);
  };
  const expectRows = job.outcome === "allInputsFailed" ? 0 : job.rows;
  const expectCode = SUCCESS.has(job.outcome) ? null : job.outcome === "allInputsFailed" ? "ALL_INPUTS_FAILED" : "JOB_FAILED";
  const bound = job.startDelayMs + job.durationMs + 20000;
  const delivered = [];
  const ends = {}; // client → Date.now() when it was stopped or ended
  const connection = { baseUrl, apiKey, projectId };
  const useFetchOption = r.chance(0.5);
  const fetchOption = useFetchOption ? { fetch: (url, init) => globalThis.fetch(url, init) } : {};

  // A's and B's options: the same connection and settings, each its client header (the requests
  // are counted per client), its record, its seed and what it does after a batch.
  const pollerOptions = (client, rec, seed, afterBatch) => ({
    ...connection,
    ...opts,
    ...fetchOption,
    jobUid,
    seed,
    headers: { "x-chaos-client": `${jobUid}:${client}` },
    onBatch(batch) {
      check(`${client} batch cursor`, batch.cursor);
      rec.batches += 1;
      delivered.push(...batch.results.map((row) => row.id));
      return afterBatch();
    },
    onStatus(run) {
      check(`${client} onStatus payload`, run);
      rec.statuses.push(run);
    },
    ...endRecorders(client, rec, check),
  });

  // A: stopped mid-run (in a callback, by a timer, while a batch is being processed, or at once).
  const stopPlan = r.pick(["inBatch", "timer", "asyncBatch", "atOnce", "timer"]);
  const stopAfterBatches = r.int(1, 4);
  const a = { batches: 0, completes: [], errors: [], statuses: [] };
  let poller = null;
  const stopA = () => {
    if (!ends.A) ends.A = Date.now();
    poller.stop();
  };
  poller = new JobPoller(
    pollerOptions("A", a, runSeed, () => {
      if (stopPlan === "inBatch" && a.batches >= stopAfterBatches) stopA();
      if (stopPlan === "asyncBatch" && a.batches >= stopAfterBatches) return sleep(r.int(0, 10)).then(stopA);
      return undefined;
    }),
  );
  const webhooks = planWebhooks(r, job, jobUid, projectId);
  const started = poller.start();
  if (stopPlan === "atOnce") stopA();
  let stopTimer = null;
  if (stopPlan === "timer") stopTimer = setTimeout(stopA, r.int(0, job.startDelayMs + job.durationMs));
  const webhookTimers = deliver(webhooks.filter((w) => w.to === "A"), () => poller, wrong);
  const outcomeA = await within(started, bound);
  clearTimeout(stopTimer);
  webhookTimers.forEach(clearTimeout);
  if (!ends.A) ends.A = Date.now();
  let hangs = 0;
  if (outcomeA.hang) {
    hangs += 1;
    problems.push(`poller A did not settle within ${bound} ms (stop plan ${stopPlan})`);
    poller.stop();
  }
  const cursor = poller.cursor;
  check("A cursor", cursor);
  checkOneOutcome("A", outcomeA, a, wrong);
  if (outcomeA.error) check("A rejection", errorText(outcomeA.error));
  // A stopped before its end: a "stopped" summary; A that reached the end first: the run's own outcome.
  const aEnded = (outcomeA.value && outcomeA.value.status !== "stopped") || (outcomeA.error && outcomeA.error.code !== "ABORTED");
  if (aEnded) checkExpected("A", outcomeA, job, expectCode, expectRows, wrong);
  // A webhook relayed after the stop: must send nothing.
  try {
    poller.webhookReceived({ job_uid: jobUid, message: WEBHOOK_MESSAGES.succeeded, error: null });
  } catch (error) {
    wrong.push(`webhookReceived after stop threw ${error?.message}`);
  }

  // B: resumes from A's cursor — a JobPoller, or pollStep rounds as a cron worker would.
  const viaSteps = r.chance(0.2);
  const b = { batches: 0, completes: [], errors: [], statuses: [] };
  let outcomeB;
  if (viaSteps) {
    outcomeB = await within(stepLoop({ pollStep, connection, opts, jobUid, cursor, runSeed, r, delivered, check, b }), bound);
  } else {
    const resumed = new JobPoller({ ...pollerOptions("B", b, runSeed + 1, () => (r.chance(0.2) ? sleep(r.int(0, 5)) : undefined)), cursor });
    const timers = deliver(webhooks.filter((w) => w.to === "B"), () => resumed, wrong);
    outcomeB = await within(resumed.start(), bound);
    timers.forEach(clearTimeout);
    if (outcomeB.hang) resumed.stop();
    check("B cursor", resumed.cursor);
    checkOneOutcome("B", outcomeB, b, wrong);
  }
  ends.B = Date.now();
  if (outcomeB.hang) {
    hangs += 1;
    problems.push(`poller B did not settle within ${bound} ms`);
  } else {
    if (outcomeB.error) check("B rejection", errorText(outcomeB.error));
    checkExpected("B", outcomeB, job, expectCode, expectRows, wrong);
  }

  // Silence after the end: nothing sent by either client after it ended, nothing received by
  // the simulator after B ended (A's requests all came before B started).
  await sleep(Math.max(3 * opts.intervalMs, 2 * opts.retry.maxDelayMs, 60));
  let requestsAfterEnd = 0;
  for (const client of ["A", "B"]) {
    const late = (probe.byClient.get(`${jobUid}:${client}`) ?? []).filter((c) => c.at > ends[client]);
    if (late.length > 0) problems.push(`client ${client} sent ${late.length} requests after its end: ${late.slice(0, 3).map((c) => c.url).join(" ")}…`);
    requestsAfterEnd += late.length;
  }
  const { log } = await control(probe, controlOrigin, `/stats?job=${encodeURIComponent(jobUid)}`);
  const lateAtServer = log.filter((e) => e.t > ends.B);
  if (lateAtServer.length > 0) problems.push(`the simulator received ${lateAtServer.length} requests after the end`);
  requestsAfterEnd += lateAtServer.length;
  for (const e of log) check(`sim log path ${e.path}`, e.path);
  for (const c of [...(probe.byClient.get(`${jobUid}:A`) ?? []), ...(probe.byClient.get(`${jobUid}:B`) ?? [])]) check("request URL", c.url);
  probe.byClient.delete(`${jobUid}:A`);
  probe.byClient.delete(`${jobUid}:B`);

  // Rows: every expected row exactly once, in order, across A and B.
  const seen = new Set(delivered);
  const duplicated = delivered.length - seen.size;
  let lost = 0;
  for (let i = 0; i < expectRows; i++) if (!seen.has(`row-${i}`)) lost += 1;
  const unexpected = [...seen].filter((id) => !/^row-\d+$/.test(id) || Number(id.slice(4)) >= expectRows);
  if (lost > 0) problems.push(`${lost} of ${expectRows} rows lost`);
  if (duplicated > 0) problems.push(`${duplicated} rows delivered twice`);
  if (unexpected.length > 0) wrong.push(`unexpected rows ${unexpected.slice(0, 5).join(", ")}`);
  if (duplicated === 0 && lost === 0 && delivered.some((id, i) => id !== `row-${i}`)) wrong.push("rows out of order");
  const outcomeErrors = wrong.length;
  problems.push(...wrong);
  if (leakPlaces.length > 0) problems.push(`the API key appeared in: ${[...new Set(leakPlaces)].join(", ")}`);
  if (problems.length > 0) problems.unshift(`job ${JSON.stringify(job)} options ${JSON.stringify(opts)} stop ${stopPlan} steps ${viaSteps}`);
  return {
    rows: seen.size,
    faults: log.filter((e) => e.fault).length,
    requests: log.length,
    lost,
    duplicated,
    requestsAfterEnd,
    hangs,
    keyLeaks: leakPlaces.length,
    outcomeErrors,
    problems,
  };
}

/** Webhooks for this run, each to A or B at a time in the run (early ones included). */
function planWebhooks(r, job, jobUid, projectId) {
  const count = r.pick([0, 0, 1, 2, 3]);
  return Array.from({ length: count }, () => {
    const kind = r.pick(WEBHOOK_KINDS);
    const payload = {
      uid: `wh-${r.int(0, 1e9)}`,
      job_uid: kind === "otherJob" ? `${jobUid}-other` : jobUid,
      message: WEBHOOK_MESSAGES[kind] ?? WEBHOOK_MESSAGES.succeeded,
      project_uid: projectId,
      error: kind === "failed" ? "Job stopped" : null,
      recipe_ref: null,
      workflow_uid: "sim-workflow",
      workflow_name: "Simulated workflow",
      job_name: "Simulated run",
    };
    return { to: r.pick(["A", "B"]), kind, payload, atMs: r.int(0, job.startDelayMs + job.durationMs + 50) };
  });
}

function deliver(webhooks, getPoller, problems) {
  return webhooks.map((w) =>
    setTimeout(() => {
      try {
        getPoller().webhookReceived(w.payload);
        if (w.kind === "otherJob") problems.push("outcome: another job's webhook was accepted");
      } catch (error) {
        if (w.kind !== "otherJob" || !(error instanceof TypeError)) problems.push(`webhookReceived (${w.kind}) threw ${error?.message}`);
      }
    }, w.atMs),
  );
}

/** B as a cron worker: pollStep rounds from the cursor until done. */
async function stepLoop({ pollStep, connection, opts, jobUid, cursor, runSeed, r, delivered, check, b }) {
  let current = cursor;
  let total = 0;
  for (let round = 0; round < 10000; round++) {
    const step = await pollStep({
      ...connection,
      jobUid,
      cursor: current,
      maxRequests: r.int(1, 12),
      deadlineMs: r.int(50, 400),
      retry: opts.retry,
      rowKey: opts.rowKey,
      timeoutMs: opts.timeoutMs,
      seed: runSeed + round,
      headers: { "x-chaos-client": `${jobUid}:B` },
    });
    check("step cursor", step.cursor);
    check("step payload", { ...step, results: undefined });
    if (step.error) check("step error", errorText(step.error));
    b.batches += step.results.length > 0 ? 1 : 0;
    delivered.push(...step.results.map((row) => row.id));
    total += step.results.length;
    current = step.cursor;
    if (step.done) {
      if (step.error) throw step.error;
      return { status: step.status, totalResults: total, viaSteps: true };
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs));
  }
  throw new Error("pollStep never reported done in 10000 rounds");
}

function checkOneOutcome(name, outcome, rec, problems) {
  if (outcome.hang) return;
  const calls = rec.completes.length + rec.errors.length;
  // stop() is not an outcome of the run: neither callback is called.
  const expected = outcome.value?.status === "stopped" ? 0 : 1;
  if (calls !== expected) problems.push(`${name}: onComplete/onError called ${calls} times (${expected} expected)`);
  if (expected && outcome.value && rec.completes[0] !== outcome.value) problems.push(`${name}: onComplete did not get start()'s summary`);
  if (outcome.error && rec.errors[0] !== outcome.error) problems.push(`${name}: onError did not get start()'s error`);
}

function checkExpected(name, outcome, job, expectCode, expectRows, problems) {
  if (expectCode === null) {
    if (!outcome.value) {
      problems.push(`${name}: outcome ${outcome.error?.code} "${outcome.error?.message}", expected success ${job.outcome}`);
      return;
    }
    const status = String(outcome.value.status).toLowerCase();
    if (status !== job.outcome) problems.push(`${name}: outcome status ${outcome.value.status}, expected ${job.outcome}`);
    if (!outcome.value.viaSteps && outcome.value.totalResults !== expectRows) {
      problems.push(`${name}: summary totalResults ${outcome.value.totalResults}, expected ${expectRows}`);
    }
  } else if (outcome.error?.code !== expectCode) {
    const got = outcome.value ? `success ${outcome.value.status}` : `${outcome.error?.code} "${outcome.error?.message}"`;
    problems.push(`${name}: outcome ${got}, expected ${expectCode}`);
  }
}
