// A tiny app as a user would write it: the package imported by name, bundled by Vite.
// The test passes the run to poll in the query string (?job=…).
import { JobPoller } from "captaindata-poller";

const params = new URLSearchParams(location.search);
const list = document.getElementById("rows");
const poller = new JobPoller({
  jobUid: params.get("job"),
  baseUrl: `${location.origin}/v3`,
  apiKey: "sim-key",
  projectId: "sim-project",
  intervalMs: 100,
  statusEvery: 2,
  onBatch({ results }) {
    for (const row of results) list.append(Object.assign(document.createElement("li"), { textContent: row.id }));
  },
});
poller.start().then(
  (summary) => {
    document.getElementById("status").textContent = `${summary.status}: ${summary.totalResults}`;
    document.body.dataset.state = "done";
  },
  (error) => {
    document.getElementById("status").textContent = `${error.code}: ${error.message}`;
    document.body.dataset.state = "failed";
  },
);
