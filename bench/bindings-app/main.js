// The bindings bench's app (bench/bindings-big-run.mjs): useJobPoller in React or Vue
// (?framework=react|vue&job=…&job=…), showing what does not grow with the rows (the count and
// the last row), so the time from the binding's taking a batch to the framework's commit of it
// is the binding's cost, not the app's. The runs are polled one after the other (the first
// warms the JIT up, so the batches compared all run optimized code); each run's batches are on
// `window.runs`, and `body[data-done]` is set when the last one finished.
import { createElement, useEffect, useLayoutEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { createApp, defineComponent, h, onUpdated, ref, watch } from "vue";
import { useJobPoller as useReactPoller } from "captaindata-poller/react";
import { useJobPoller as useVuePoller } from "captaindata-poller/vue";

const params = new URLSearchParams(location.search);
const jobs = params.getAll("job");
const options = (jobUid) => ({
  jobUid,
  baseUrl: `${location.origin}/v3`,
  apiKey: "sim-key",
  projectId: "sim-project",
  intervalMs: 100,
  shareAcrossTabs: false,
  onBatch,
});

/** Per run, `{ held, rows, handedAt, committedAt }` a batch: the rows held before it, its size, when the binding took it, when it was on screen. */
const runs = (window.runs = []);
/**
 * A promise, as an app that saves each batch returns: the binding appends the rows when it
 * resolves and the poller waits for that, so between `handedAt` (just before the append) and
 * the commit only the binding and the framework run, not the poller's next request.
 */
function onBatch(batch) {
  return Promise.resolve().then(() => void runs.at(-1).push({ held: batch.offset, rows: batch.results.length, handedAt: performance.now(), committedAt: null }));
}
/** Called in the framework's commit: the batches now shown were committed now. */
function committed(rowCount) {
  const now = performance.now();
  for (const b of runs.at(-1) ?? []) if (b.committedAt === null && b.held + b.rows <= rowCount) b.committedAt = now;
}
/** The next run, or the end. */
function next(index, show) {
  if (index + 1 < jobs.length) show(index + 1);
  else document.body.dataset.done = "true";
}

function ReactRun({ jobUid, onFinished }) {
  const poller = useReactPoller(options(jobUid));
  useLayoutEffect(() => committed(poller.rowCount), [poller.rowCount]);
  useEffect(() => void (poller.status === "finished" && onFinished()), [poller.status]);
  return createElement("section", null, createElement("p", { id: "count" }, poller.rowCount), createElement("p", { id: "last" }, poller.rows.at(-1)?.id ?? ""));
}

function ReactApp() {
  const [index, show] = useState(0);
  useLayoutEffect(() => void runs.push([]), [index]);
  return createElement(ReactRun, { key: index, jobUid: jobs[index], onFinished: () => next(index, show) });
}

const VueRun = defineComponent({
  props: { jobUid: { type: String, required: true } },
  emits: ["finished"],
  setup(props, { emit }) {
    const { status, rows, rowCount } = useVuePoller(options(props.jobUid));
    onUpdated(() => committed(rowCount.value));
    watch(status, (value) => value === "finished" && emit("finished"));
    return () => h("section", [h("p", { id: "count" }, String(rowCount.value)), h("p", { id: "last" }, rows.value.at(-1)?.id ?? "")]);
  },
});

const VueApp = defineComponent(() => {
  const index = ref(0);
  runs.push([]);
  const show = (i) => {
    runs.push([]);
    index.value = i;
  };
  return () => h(VueRun, { key: index.value, jobUid: jobs[index.value], onFinished: () => next(index.value, show) });
});

const root = document.getElementById("root");
if (params.get("framework") === "vue") createApp(VueApp).mount(root);
else createRoot(root).render(createElement(ReactApp));
