// Node ≥ 20: `init()` cannot fetch a file: URL there, so instantiate from the bytes.
import { readFileSync } from "node:fs";
import { classifyWebhook, initSync, JobPoller, pollStep, scheduleWorkflow } from "../pkg/captaindata_poller.js";
import { alone, withIterator } from "./extras.js";

initSync({ module: readFileSync(new URL("../pkg/captaindata_poller_bg.wasm", import.meta.url)) });
withIterator(alone(JobPoller));

export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
export { classifyWebhook, JobPoller, pollStep, scheduleWorkflow };
