// Cloudflare Workers (workerd): the runtime compiles an imported .wasm into a module.
import wasmModule from "../pkg/captaindata_poller_bg.wasm";
import { classifyWebhook, initSync, JobPoller, pollStep, scheduleWorkflow } from "../pkg/captaindata_poller.js";
import { alone, withIterator } from "./extras.js";

initSync({ module: wasmModule });
withIterator(alone(JobPoller));

export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
export { classifyWebhook, JobPoller, pollStep, scheduleWorkflow };
