// Cloudflare Workers (workerd): the runtime compiles an imported .wasm into a module.
import wasmModule from "../pkg/captaindata_poller_bg.wasm";
import { initSync, JobPoller, pollStep, scheduleWorkflow } from "../pkg/captaindata_poller.js";
import { ERROR_CODES, alone, withIterator } from "./extras.js";

initSync({ module: wasmModule });
withIterator(alone(JobPoller));

export { ERROR_CODES, JobPoller, pollStep, scheduleWorkflow };
