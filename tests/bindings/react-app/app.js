// The app's components, as a user would write them: the hook imported by name, inline options
// and callbacks on every render. Plain `createElement` (no JSX) so Node renders the same file
// on the server (tests/demo/react-ssr.test.mjs). The query string picks the run and the mode
// (?job=…&share=0&keepRows=…&list=0); counters for the test are on `window.app`.
import { createElement as h, useEffect, useState } from "react";
import { useJobPoller } from "captaindata-poller/react";

const inBrowser = typeof window === "object";
const params = new URLSearchParams(inBrowser ? location.search : "");
const origin = inBrowser ? location.origin : "http://127.0.0.1:9";
// rowArrays: the `rows` arrays rendered, told apart by a mark (a new array would be a copy).
export const counters = { firstRenderAt: null, renders: 0, rowsPerRender: [], rowArrays: 0, batches: 0, unmountedAt: null };
const seen = new WeakSet();
if (inBrowser) window.app = counters;

function Run({ jobUid }) {
  const poller = useJobPoller({
    jobUid,
    baseUrl: `${origin}/v3`,
    apiKey: "sim-key",
    projectId: "sim-project",
    intervalMs: 100,
    statusEvery: 2,
    // share=0: a second poller would show as requests instead of hiding as a follower tab.
    shareAcrossTabs: params.get("share") !== "0",
    keepRows: params.has("keepRows") ? Number(params.get("keepRows")) : undefined,
    onBatch: () => {
      counters.batches += 1;
    },
  });
  counters.renders += 1;
  counters.rowsPerRender.push(poller.rowCount);
  if (!seen.has(poller.rows)) counters.rowArrays += 1;
  seen.add(poller.rows);
  return h(
    "section",
    { "data-status": poller.status, "data-rows": poller.rowCount },
    h("p", { id: "status" }, poller.status),
    h("p", { id: "error", title: poller.error?.message ?? "" }, poller.error ? (poller.error.code ?? poller.error.name) : ""),
    h("p", { id: "count" }, poller.rowCount),
    h("button", { type: "button", onClick: poller.stop }, "Stop"),
    params.get("list") !== "0" && h("ol", { id: "rows" }, poller.rows.map((row) => h("li", { key: row.id }, row.id))),
  );
}

export function App({ jobUid = params.get("job") }) {
  const [shown, setShown] = useState(true);
  useEffect(() => {
    counters.firstRenderAt ??= performance.now(); // the app is on screen
  }, []);
  const unmount = () => {
    counters.unmountedAt = performance.now();
    setShown(false);
  };
  return h(
    "main",
    null,
    h("h1", null, "React app"),
    h("button", { type: "button", onClick: unmount }, "Unmount"),
    shown && h(Run, { jobUid }),
  );
}
