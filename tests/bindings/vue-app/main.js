// A Vue 3 app as a user would write it: the composable imported by name, options given as a
// getter (re-evaluated on every change of what it reads). The test passes the run in the query
// string (?job=…&share=0&list=0); counters for the test are on `window.app`.
import { createApp, defineComponent, h, onUpdated, ref } from "vue";
import { useJobPoller } from "captaindata-poller/vue";

const params = new URLSearchParams(location.search);
// rowArrays: the `rows` arrays rendered, told apart by a mark (a new array would be a copy).
const app = (window.app = { batches: 0, unmountedAt: null, updates: 0, rowArrays: 0 });
const seen = new WeakSet();

const Run = defineComponent({
  props: { jobUid: { type: String, required: true } },
  setup(props) {
    const { status, rows, rowCount, error, stop } = useJobPoller(() => ({
      jobUid: props.jobUid,
      baseUrl: `${location.origin}/v3`,
      apiKey: "sim-key",
      projectId: "sim-project",
      intervalMs: 100,
      statusEvery: 2,
      // share=0: a second poller would show as requests instead of hiding as a follower tab.
      shareAcrossTabs: params.get("share") !== "0",
      onBatch: () => {
        app.batches += 1;
      },
    }));
    onUpdated(() => {
      app.updates += 1;
      if (!seen.has(rows.value)) app.rowArrays += 1;
      seen.add(rows.value);
    });
    return () =>
      h("section", { "data-status": status.value, "data-rows": rowCount.value }, [
        h("p", { id: "status" }, status.value),
        h("p", { id: "error" }, error.value ? (error.value.code ?? error.value.name) : ""),
        h("p", { id: "count" }, String(rowCount.value)),
        h("button", { type: "button", onClick: stop }, "Stop"),
        params.get("list") !== "0" && h("ol", { id: "rows" }, rows.value.map((row) => h("li", { key: row.id }, row.id))),
      ]);
  },
});

createApp(
  defineComponent(() => {
    const shown = ref(true);
    const unmount = () => {
      app.unmountedAt = performance.now();
      shown.value = false;
    };
    return () =>
      h("main", [
        h("h1", "Vue app"),
        h("button", { type: "button", onClick: unmount }, "Unmount"),
        shown.value ? h(Run, { jobUid: params.get("job") }) : null,
      ]);
  }),
).mount("#root");
