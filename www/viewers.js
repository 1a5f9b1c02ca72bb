// The viewers page: N viewers of one run through the local worker (`npm run worker:dev`), each
// on the worker's stream, beside the worker's requests to Captain Data (the simulator's log of
// the run, read from its /__sim/stats) and each viewer's delay from the worker's commit of a row
// to its onBatch (www/commit-times.js, the bench's measure).
import { commitTimes, rowDelays } from "./commit-times.js";
import { startViewer } from "./push-viewer.js";

const $ = (id) => document.getElementById(id);
/** worker:dev's simulator port by default (SIM_PORT); `?dev=` names another. */
const DEFAULT_DEV = "http://127.0.0.1:8790";
const MAX_VIEWERS = 20;
const REFRESH_MS = 1000;

/** The run watched and its viewers; replaced by every start. */
let current = null;

const ended = (viewer) => ["finished", "stopped", "failed"].includes(viewer.state);
const formatMs = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

function showError(title, what) {
  $("error-title").textContent = title;
  $("error-what").textContent = what;
  $("error").hidden = false;
}

/** A new run from worker:dev: created in its simulator, tracked by its worker, with a read token. */
async function askForRun(dev, spec) {
  let response;
  try {
    response = await fetch(new URL("/__dev/runs", dev), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(spec) });
  } catch {
    throw new Error(`Nothing answers at ${dev}. Start the local worker with \`npm run worker:dev\` and open the viewers link it prints.`);
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.message ?? `worker:dev answered ${response.status}`);
  return body;
}

// ---- the delays, from the simulator's log of the worker's requests --------------------------

/**
 * Each viewer's delays, for the rows some viewer had before `asked` (the log read then holds
 * every request the worker made before them). The simulator logs when a request came in and
 * answers it at once: that is the end of the worker's answer, within a millisecond or two.
 */
function measureDelays(watch, asked) {
  const seen = new Map(); // row offset → when it first reached a viewer of this page
  for (const { arrivals } of watch.viewers) {
    for (const { at, offset, n } of arrivals) {
      if (at >= asked) continue;
      for (let i = offset; i < offset + n; i++) {
        const first = seen.get(i);
        if (first === undefined || at < first) seen.set(i, at);
      }
    }
  }
  const answers = watch.log.filter((e) => e.status !== null).map((e) => e.t);
  const commits = commitTimes(seen, answers);
  for (const viewer of watch.viewers) {
    const delays = rowDelays(viewer, commits);
    viewer.delay = delays.length ? { last: delays.at(-1), max: delays.reduce((a, b) => Math.max(a, b)) } : null;
  }
}

async function refresh(watch) {
  const asked = Date.now();
  const response = await fetch(`${watch.run.simulatorUrl}/__sim/stats?job=${encodeURIComponent(watch.run.jobUid)}`);
  if (!response.ok) throw new Error(`the simulator answered ${response.status}`);
  const stats = await response.json();
  if (current !== watch) return;
  // Preflights only exist in browsers: the worker sends none, and they are no API call.
  watch.log = stats.log.filter((e) => e.kind !== "preflight");
  watch.apiRequests = stats.requests.total;
  measureDelays(watch, asked);
  scheduleRender();
}

/** Reads the simulator's log every second until every viewer ended (once more after that). */
function keepRefreshing(watch) {
  if (watch.refreshing) return;
  watch.refreshing = true;
  const loop = async () => {
    const allEnded = watch.viewers.every(ended);
    try {
      await refresh(watch);
    } catch (error) {
      showError("Cannot read the simulator's counters", `${error.message}. Is worker:dev still running?`);
    }
    if (current !== watch) return;
    if (allEnded) watch.refreshing = false;
    else setTimeout(loop, REFRESH_MS);
  };
  loop();
}

// ---- rendering ------------------------------------------------------------------------------

function viewerCard(viewer) {
  const card = document.createElement("li");
  card.className = "viewer";
  card.innerHTML = `<strong>Viewer ${viewer.number}</strong> <span class="state"></span><span class="rows"></span><span class="delay"></span>`;
  return card;
}

function renderViewer(viewer) {
  const card = (viewer.card ??= $("viewers").appendChild(viewerCard(viewer)));
  card.dataset.state = viewer.state;
  card.dataset.rows = String(viewer.rows);
  card.dataset.inOrder = String(viewer.inOrder);
  card.dataset.runStatus = viewer.runStatus;
  if (viewer.delay) card.dataset.delayMs = String(Math.round(viewer.delay.last));
  const state = viewer.state === "failed" ? `failed: ${viewer.error}` : viewer.runStatus ? `${viewer.state} · run ${viewer.runStatus}` : viewer.state;
  card.querySelector(".state").textContent = state;
  const order = viewer.inOrder ? "each once, in order" : "OUT OF ORDER or repeated";
  card.querySelector(".rows").textContent = `${viewer.rows.toLocaleString("en")} rows · ${order}`;
  const none = ended(viewer) ? "delay — (its rows were all backlog)" : "delay — (no live row yet)";
  card.querySelector(".delay").textContent = viewer.delay ? `delay ${formatMs(viewer.delay.last)} (max ${formatMs(viewer.delay.max)})` : none;
}

function renderLog(watch) {
  const body = $("api-log").tBodies[0];
  const rows = watch.log.map((e) => {
    const then = watch.viewers.filter((v) => v.joined <= e.t).length;
    const what = e.kind === "run" ? "run status" : e.kind === "results" ? `results${new URL(e.path, "http://x").search}` : e.path;
    return `<tr><td>${((e.t - watch.t0) / 1000).toFixed(1)} s</td><td>${escape(`${e.method} ${what}`)}</td><td>${e.status ?? "…"}</td><td>${then}</td></tr>`;
  });
  body.innerHTML = rows.reverse().join("");
}

const escape = (text) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function render() {
  const watch = current;
  if (!watch) return;
  const { viewers } = watch;
  const live = viewers.filter((v) => !ended(v)).length;
  document.body.dataset.runState = live > 0 ? "running" : "ended";
  const runStatus = viewers.find((v) => v.runStatus)?.runStatus ?? "starting…";
  $("run-status").textContent = live > 0 ? `${runStatus} · ${live} of ${viewers.length} viewers connected` : `${runStatus} · every viewer ended`;
  $("c-viewers").textContent = String(viewers.length);
  $("c-api").textContent = String(watch.apiRequests);
  $("c-sockets").textContent = String(viewers.reduce((s, v) => s + v.sockets, 0));
  $("c-reads").textContent = String(viewers.reduce((s, v) => s + v.reads, 0));
  $("add-viewer").disabled = viewers.length >= MAX_VIEWERS;
  viewers.forEach(renderViewer);
  renderLog(watch);
}

let frame = 0;
const scheduleRender = () => {
  frame ||= requestAnimationFrame(() => {
    frame = 0;
    render();
  });
};

// ---- actions --------------------------------------------------------------------------------

function addViewer(watch) {
  if (watch.viewers.length >= MAX_VIEWERS) return;
  watch.viewers.push(startViewer(watch.run, watch.viewers.length + 1, scheduleRender));
  keepRefreshing(watch);
  scheduleRender();
}

async function onStart(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const field = (name) => form.elements.namedItem(name).value;
  for (const viewer of current?.viewers ?? []) viewer.stop();
  current = null;
  $("error").hidden = true;
  $("viewers").replaceChildren();
  $("start").disabled = true;
  try {
    const t0 = Date.now();
    const run = await askForRun(field("dev"), { rows: Number(field("rows")), durationMs: Math.round(Number(field("durationS")) * 1000) });
    const watch = { run, t0, viewers: [], log: [], apiRequests: 0, refreshing: false };
    current = watch;
    $("run-job").textContent = run.jobUid;
    const count = Math.min(MAX_VIEWERS, Math.max(1, Number(field("viewers"))));
    for (let i = 0; i < count; i++) addViewer(watch);
  } catch (error) {
    showError("No run started", error.message);
  } finally {
    $("start").disabled = false;
  }
}

function init() {
  const dev = new URLSearchParams(location.search).get("dev") ?? DEFAULT_DEV;
  $("start-form").elements.namedItem("dev").value = dev;
  $("start-form").addEventListener("submit", onStart);
  $("add-viewer").addEventListener("click", () => current && addViewer(current));
  document.body.dataset.ready = "true";
}

init();
