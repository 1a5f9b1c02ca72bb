// A React 19 app as a user would write it: StrictMode, the hook imported by name, inline
// options and callbacks on every render. The test passes the run in the query string
// (?job=…&share=0&keepRows=…&list=0) and reads what the page shows, plus a few counters on `window.app`.
import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { useJobPoller } from "captaindata-poller/react";

const params = new URLSearchParams(location.search);
const app = (window.app = { firstRenderAt: null, renders: 0, rowsPerRender: [], batches: 0, unmountedAt: null });

function Run({ jobUid }) {
  const poller = useJobPoller({
    jobUid,
    baseUrl: `${location.origin}/v3`,
    apiKey: "sim-key",
    projectId: "sim-project",
    intervalMs: 100,
    statusEvery: 2,
    // share=0: a second poller would show as requests instead of hiding as a follower tab.
    shareAcrossTabs: params.get("share") !== "0",
    keepRows: params.has("keepRows") ? Number(params.get("keepRows")) : undefined,
    onBatch: () => {
      app.batches += 1;
    },
  });
  app.renders += 1;
  app.rowsPerRender.push(poller.rowCount);
  return (
    <section data-status={poller.status} data-rows={poller.rowCount}>
      <p id="status">{poller.status}</p>
      <p id="error">{poller.error ? poller.error.code ?? poller.error.name : ""}</p>
      <p id="count">{poller.rowCount}</p>
      <button type="button" onClick={poller.stop}>Stop</button>
      {params.get("list") !== "0" && (
        <ol id="rows">{poller.rows.map((row) => <li key={row.id}>{row.id}</li>)}</ol>
      )}
    </section>
  );
}

function App() {
  const [shown, setShown] = useState(true);
  useEffect(() => {
    app.firstRenderAt ??= performance.now(); // the app is on screen
  }, []);
  return (
    <main>
      <h1>React app</h1>
      <button
        type="button"
        onClick={() => {
          app.unmountedAt = performance.now();
          setShown(false);
        }}
      >
        Unmount
      </button>
      {shown && <Run jobUid={params.get("job")} />}
    </main>
  );
}

createRoot(document.getElementById("root")).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
