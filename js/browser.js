// Pages (<script type="module">), Web Workers and bundlers (Vite resolves the .wasm URL).
import init, { JobPoller, pollStep, scheduleWorkflow } from "../pkg/captaindata_poller.js";
import { ERROR_CODES, withIterator } from "./extras.js";

await init(); // fetches ../pkg/captaindata_poller_bg.wasm next to the glue
withIterator(JobPoller);

export { ERROR_CODES, JobPoller, pollStep, scheduleWorkflow };
