// The demo page: starts or picks a run, polls it with the package's JobPoller, and shows rows,
// progress, counters, the request timeline and the naive loop's cost. Survives reloads.
import { JobPoller, isFinalError } from "captaindata-poller";
import { DEFAULTS } from "captaindata-poller/rules";
import { adviceFor } from "./error-advice.js";
import { comparisonNote, estimateNaiveCost, isOneGrowingPage, splitAttempts } from "./naive-cost.js";
import { ARRIVALS, FAULT_PRESETS, simulatedJobSpec } from "./presets.js";
import { showPace } from "./pace-note.js";
import { createRequestMeter } from "./request-meter.js";
import { createResultsTable } from "./results-table.js";
import { clearStoredRows, forgetRun, loadSavedRun, saveRun, storeRows, storedRows } from "./saved-run.js";
import { connectionFor, describeMode, loadSettings, saveSettings } from "./settings.js";
import { createSimulatedJob, naiveLoopCost, simulatorStats } from "./simulator-client.js";
import { drawTimeline } from "./timeline-chart.js";

const $ = (id) => document.getElementById(id);
/** How often a hidden tab polls (the package's default): the pace note says so. */
const HIDDEN_INTERVAL_MS = DEFAULTS.hiddenIntervalMs;

/** 50000 → "50,000". By hand: the first toLocaleString() loads ICU's number data, a 50 ms stall. */
const formatCount = (n) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");

let settings = loadSettings();
/** The run being watched; replaced by every start or resume. */
let current = null;
const table = createResultsTable($("results-wrap"), $("results"), (received) => {
  $("results-count").textContent = `(${formatCount(received)})`;
  $("download-rows").disabled = received === 0;
});

/** The rows held, one JSON object a line, as a file the browser saves. */
function downloadRows() {
  const text = table.rows().map((row) => JSON.stringify(row)).join("\n");
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text ? `${text}\n` : ""], { type: "application/x-ndjson" }));
  link.download = `${current?.saved.jobUid ?? "rows"}.ndjson`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

const formatBytes = (n) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(2)} MB`);
const formatMs = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

function setState(state, text) {
  document.body.dataset.runState = state;
  $("run-status").textContent = text;
  $("stop").disabled = state !== "running";
  const saved = loadSavedRun();
  $("resume").disabled = state === "running" || !saved || saved.state === "completed";
}

function showError(error) {
  const { title, what, todo } = adviceFor(error);
  $("error-title").textContent = title;
  $("error-what").textContent = what;
  $("error-todo").textContent = todo;
  $("error-detail").textContent = error?.message && error.message !== what ? `Details: ${error.message}` : "";
  $("error").hidden = false;
}

// ---- rendering ---------------------------------------------------------------------------

function renderProgress(run) {
  const received = table.received;
  const status = run.lastStatus;
  const total = run.saved.expectedRows ?? status?.totalRowCount ?? status?.numberInputs ?? null;
  const bar = $("progress");
  if (run.done === "completed") {
    bar.max = 1;
    bar.value = 1;
  } else if (total) {
    bar.max = total;
    bar.value = Math.min(received, total);
  } else bar.removeAttribute("value");
  $("progress-text").textContent = total ? `${formatCount(received)} of ${formatCount(total)} rows` : `${formatCount(received)} rows`;
}

function renderCounters(run) {
  const totals = run.meter.totals();
  $("c-rows").textContent = formatCount(table.received);
  $("c-results").textContent = String(totals.requests.results);
  $("c-status").textContent = String(totals.requests.run);
  $("c-bytes").textContent = formatBytes(totals.bytes);
  $("c-retries").textContent = String(run.summary?.retries ?? totals.failed);
  $("c-first").textContent = run.firstRowMs === null ? "—" : formatMs(run.firstRowMs);
}

/** The numbers, after each batch, status and request (one frame however many came in it). */
function renderNumbers() {
  const run = current;
  if (!run) return;
  renderProgress(run);
  renderCounters(run);
}

/**
 * The numbers and the timeline chart: once a second and when the run ends. The chart is
 * rebuilt whole (its time axis moves every second anyway); rebuilding it for every batch made
 * a burst of batches lay out and paint the chart again and again.
 */
function render() {
  const run = current;
  if (!run) return;
  renderNumbers();
  const nowMs = run.done ? run.endedMs : Date.now() - run.t0;
  drawTimeline($("timeline"), { events: run.meter.events, arrivals: run.arrivals, expectedRows: run.saved.expectedRows, nowMs });
}

let frame = 0;
const scheduleRender = () => {
  frame ||= requestAnimationFrame(() => {
    frame = 0;
    renderNumbers();
  });
};

// ---- the naive loop comparison -----------------------------------------------------------

function showComparison(ours, naive, note) {
  $("n-ours-req").textContent = ours ? String(ours.requests) : "—";
  $("n-ours-bytes").textContent = ours ? formatBytes(ours.bytes) : "—";
  $("n-naive-req").textContent = naive ? `${naive.estimated ? "≥ " : ""}${naive.requests}` : "—";
  $("n-naive-bytes").textContent = naive ? `${naive.estimated ? "≈ " : ""}${formatBytes(naive.bytes)}` : "—";
  $("naive-note").textContent = note;
}

/** Sim mode: what the simulator saw from this poller (across reloads), failed attempts apart. */
async function refreshSimCounts(run, withNaive) {
  const { jobUid, intervalMs, expectedRows, pageSize, arrival } = run.saved;
  const { answered: ours, failed } = splitAttempts((await simulatorStats(jobUid)).log);
  if (!withNaive) return showComparison(ours, null, "The naive loop's cost is computed by the simulator when the run ends.");
  const naive = await naiveLoopCost(jobUid, intervalMs);
  const growingPage = isOneGrowingPage({ rows: expectedRows, pageSize, arrival, oursBytes: ours.bytes, naiveBytes: naive.bytes });
  showComparison(ours, naive, comparisonNote({ ours, naive, failed, growingPage, intervalText: formatMs(intervalMs) }));
  $("naive").dataset.verdict = growingPage ? "one-growing-page" : ours.bytes < naive.bytes ? "fewer-bytes" : "more-bytes";
}

function estimateForApi(run) {
  const totals = run.meter.totals();
  const resultsBytes = run.meter.events.filter((e) => e.kind === "results").reduce((s, e) => s + e.bytes, 0);
  const runEvents = run.meter.events.filter((e) => e.kind === "run");
  const naive = estimateNaiveCost({
    arrivals: run.arrivals,
    durationMs: run.endedMs,
    intervalMs: run.saved.intervalMs,
    bytesPerRow: resultsBytes / Math.max(1, table.received),
    statusBytes: runEvents.reduce((s, e) => s + e.bytes, 0) / Math.max(1, runEvents.length),
  });
  showComparison({ requests: totals.total, bytes: totals.bytes }, naive, "Estimated for a real API from this run's row timeline: a lower bound (one page per tick).");
}

async function refreshComparison(run, final) {
  try {
    if (run.saved.mode === "sim") await refreshSimCounts(run, final);
    else if (final) estimateForApi(run);
  } catch (error) {
    $("naive-note").textContent = `Could not read the simulator's counters: ${error.message}`;
  }
}

// ---- running a poller ----------------------------------------------------------------------

function persist(run, changes) {
  run.saved = { ...run.saved, ...changes };
  if (current === run) saveRun(run.saved);
}

async function onBatch(run, batch) {
  table.append(batch.results, batch.offset);
  if (run.firstRowMs === null && batch.results.length > 0) run.firstRowMs = Date.now() - run.t0;
  run.arrivals.push({ t: Date.now() - run.t0, total: table.received });
  scheduleRender();
  // Returning this promise holds the next poll until the rows are on disk, then the cursor
  // is saved: after a reload the stored rows always reach at least the saved cursor.
  await storeRows(run.saved.jobUid, batch.offset, batch.results);
  persist(run, { cursor: batch.cursor, rows: table.received });
}

function onStatus(run, status) {
  run.lastStatus = status;
  if (!run.done) $("run-status").textContent = status.status;
  scheduleRender();
}

function finish(run, state, text) {
  run.done = state;
  run.endedMs = Date.now() - run.t0;
  clearInterval(run.timer);
  if (current !== run) return;
  setState(state, text);
  render();
  refreshComparison(run, true);
}

function onComplete(run, summary) {
  run.summary = summary;
  forgetRun();
  finish(run, "completed", `${summary.status} — ${formatCount(summary.totalResults)} rows`);
}

/** stop() ends the poll quietly: start() resolves with a "stopped" summary. */
function onStopped(run) {
  persist(run, { state: "stopped" });
  finish(run, "stopped", "stopped — press Resume to continue");
}

function onError(run, error) {
  if (error?.code === "ABORTED" && run.stoppedHere) return onStopped(run);
  if (isFinalError(error)) forgetRun();
  else persist(run, { state: "failed" });
  if (current === run) showError(error);
  finish(run, "failed", `failed: ${error?.code ?? "error"}`);
}

/** "leader · 3 tabs": tabs of this page's origin watching the same run share one poller. */
function onRoleChange(run, { role, tabs }) {
  if (current !== run) return;
  const line = $("tab-share");
  line.textContent = `${role} · ${tabs} ${tabs === 1 ? "tab" : "tabs"}`;
  line.title = role === "leader" ? "This tab polls the API for every tab watching this run." : "Another tab polls the API and shares the rows with this one.";
  line.hidden = false;
}

function pollerOptions(run) {
  const { jobUid, cursor, intervalMs, mode } = run.saved;
  return {
    ...connectionFor({ ...settings, mode }),
    jobUid,
    ...(cursor ? { cursor } : {}),
    intervalMs,
    hiddenIntervalMs: HIDDEN_INTERVAL_MS,
    statusEvery: 3,
    retry: { retries: 6, minDelayMs: Math.min(250, intervalMs), maxDelayMs: 5000 },
    timeoutMs: 15000,
    maxDurationMs: 2 * 3600 * 1000,
    fetch: run.meter.fetch,
    onBatch: (batch) => onBatch(run, batch),
    onStatus: (status) => onStatus(run, status),
    onComplete: (summary) => onComplete(run, summary),
    onError: (error) => onError(run, error),
    onRoleChange: (info) => onRoleChange(run, info),
  };
}

function stopCurrent() {
  if (!current || current.done) return;
  current.stoppedHere = true;
  current.poller?.stop();
}

/**
 * Polls `saved.jobUid` from `saved.cursor`, with `restoredRows` (rows 0… kept from before) shown first.
 * @param {import("./saved-run.js").SavedRun} saved
 */
function beginRun(saved, restoredRows = []) {
  stopCurrent();
  $("error").hidden = true;
  $("resume-offer").hidden = true;
  $("run-job").textContent = saved.jobUid;
  $("tab-share").hidden = true;
  table.clear();
  table.append(restoredRows, 0);
  const t0 = Date.now();
  const run = { saved, t0, arrivals: [{ t: 0, total: restoredRows.length }], firstRowMs: null, lastStatus: null, done: null };
  run.meter = createRequestMeter(t0, scheduleRender);
  current = run;
  try {
    run.poller = new JobPoller(pollerOptions(run));
  } catch (error) {
    showError(error);
    return finish(run, "failed", "not started: invalid settings");
  }
  persist(run, { state: "running" });
  setState("running", "starting…");
  run.poller.start().then((summary) => summary.status === "stopped" && onStopped(run), () => {}); // onError reports errors
  run.timer = setInterval(() => {
    render();
    if (run.saved.mode === "sim") refreshComparison(run, false);
  }, 1000);
  render();
}

async function startFresh(saved) {
  stopCurrent();
  await clearStoredRows();
  beginRun({ cursor: null, state: "running", rows: 0, ...saved });
}

async function resumeSaved() {
  const saved = loadSavedRun();
  if (!saved) return;
  stopCurrent();
  beginRun(saved, await storedRows(saved.jobUid));
}

// ---- forms -------------------------------------------------------------------------------

const numberField = (form, name) => Number(form.elements.namedItem(name).value);

async function onSimSubmit(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const inputs = numberField(form, "inputs");
  try {
    const spec = simulatedJobSpec({
      inputs,
      rowsPerInput: numberField(form, "rowsPerInput"),
      durationMs: Math.round(numberField(form, "durationS") * 1000),
      pageSize: numberField(form, "pageSize"),
      preset: form.elements.namedItem("preset").value,
      arrival: form.elements.namedItem("arrival").value,
      bursts: numberField(form, "bursts"),
    });
    const job = await createSimulatedJob(spec);
    $("job-uid").value = job.jobUid;
    const expectedRows = spec.outcome === "allInputsFailed" ? 0 : spec.rows;
    const arrival = spec.arrival ? "bursts" : "linear";
    await startFresh({ jobUid: job.jobUid, mode: "sim", expectedRows, pageSize: spec.pageSize, arrival, intervalMs: numberField(form, "intervalMs") });
  } catch (error) {
    showError(error);
  }
}

async function onPollSubmit(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const jobUid = form.elements.namedItem("jobUid").value.trim();
  await startFresh({ jobUid, mode: settings.mode, expectedRows: null, intervalMs: numberField(form, "intervalMs") });
}

function applySettingsToPage() {
  $("mode-line").textContent = describeMode(settings);
  const simOnly = settings.mode !== "sim";
  $("start-sim").disabled = simOnly;
  $("sim-unavailable").hidden = !simOnly;
}

function initSettingsForm() {
  const form = $("settings-form");
  form.elements.namedItem("baseUrl").value = settings.baseUrl;
  form.elements.namedItem("projectId").value = settings.projectId;
  form.elements.namedItem("apiKey").value = settings.apiKey;
  form.elements.namedItem("readToken").value = settings.readToken;
  for (const radio of form.querySelectorAll("input[name=mode]")) radio.checked = radio.value === settings.mode;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = (name) => form.elements.namedItem(name).value.trim();
    settings = {
      mode: value("mode") === "api" ? "api" : "sim",
      baseUrl: value("baseUrl"),
      projectId: value("projectId"),
      apiKey: value("apiKey"),
      readToken: value("readToken"),
    };
    saveSettings(settings);
    applySettingsToPage();
  });
}

function offerResume() {
  const saved = loadSavedRun();
  if (!saved || saved.state === "completed") return;
  $("resume-text").textContent = `Run ${saved.jobUid} was ${saved.state === "failed" ? "interrupted by an error" : "left unfinished"} with ${formatCount(saved.rows)} rows kept. Resume from where it stopped? No row will be shown twice.`;
  $("resume-offer").hidden = false;
  $("resume").disabled = false;
}

function init() {
  showPace($("pace"), { hiddenIntervalMs: HIDDEN_INTERVAL_MS });
  const select = $("preset");
  for (const [value, { label }] of Object.entries(FAULT_PRESETS)) select.append(new Option(label, value));
  const arrival = $("arrival");
  for (const [value, { label, title }] of Object.entries(ARRIVALS)) arrival.append(Object.assign(new Option(label, value), { title }));
  // The bursts' count only means something when rows arrive in bursts.
  const syncBursts = () => ($("sim-form").elements.namedItem("bursts").disabled = arrival.value !== "bursts");
  arrival.addEventListener("change", syncBursts);
  syncBursts();
  $("sim-form").addEventListener("submit", onSimSubmit);
  $("poll-form").addEventListener("submit", onPollSubmit);
  $("stop").addEventListener("click", stopCurrent);
  $("download-rows").addEventListener("click", downloadRows);
  $("resume").addEventListener("click", resumeSaved);
  $("resume-saved").addEventListener("click", resumeSaved);
  $("discard-saved").addEventListener("click", async () => {
    forgetRun();
    await clearStoredRows();
    $("resume-offer").hidden = true;
    $("resume").disabled = true;
  });
  initSettingsForm();
  applySettingsToPage();
  drawTimeline($("timeline"), { events: [], arrivals: [], expectedRows: null, nowMs: 0 });
  offerResume();
  document.body.dataset.ready = "true";
}

init();
