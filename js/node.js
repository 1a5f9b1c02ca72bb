// Node ≥ 20. The module loads synchronously on first use (the first `new JobPoller`,
// pollStep, scheduleWorkflow or preload()), not at import: a server that renders pages, or a
// CLI that only prints its help, imports the package for nothing; a bad option still throws
// from the constructor. `init()` cannot fetch a file: URL in Node, so instantiate the bytes.
import { readFileSync } from "node:fs";
import * as glue from "../pkg/captaindata_poller.js";
import { createApi } from "./poller.js";

const WASM_URL = new URL("../pkg/captaindata_poller_bg.wasm", import.meta.url);

export const { JobPoller, preload, pollStep, scheduleWorkflow, classifyWebhook, classifyV4Status } = createApi({
  poll: { load: () => (glue.initSync({ module: readFileSync(WASM_URL) }), glue), source: WASM_URL.href, sync: true },
});
export { CaptainDataError } from "./errors.js";
export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
