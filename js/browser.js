// Pages (<script type="module">), Web Workers and bundlers (Vite resolves the .wasm URL).
import init, { JobPoller as WasmJobPoller, pollStep, scheduleWorkflow } from "../pkg/captaindata_poller.js";
import { withIterator } from "./extras.js";
import { shareAcrossTabs } from "./tabs.js";

await init(); // fetches ../pkg/captaindata_poller_bg.wasm next to the glue
// Tabs of one origin polling the same run share one poller (js/tabs.js).
const JobPoller = withIterator(shareAcrossTabs(WasmJobPoller));

export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
export { JobPoller, pollStep, scheduleWorkflow };
