// Mounts the README's component with ?job=; the "Next run" button passes it ?next= instead (a
// prop change: the getter's values change, the poller restarts).
import { createApp, h, ref } from "vue";
import Leads from "./Leads.vue";

const params = new URLSearchParams(location.search);
const jobUid = ref(params.get("job") ?? "");
createApp({
  setup: () => () => [
    h("button", { id: "next", onClick: () => (jobUid.value = params.get("next") ?? "") }, "Next run"),
    h(Leads, { jobUid: jobUid.value }),
  ],
}).mount("#app");
