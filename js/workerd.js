// Cloudflare Workers (workerd): the runtime compiles an imported .wasm into a module; it is
// instantiated synchronously on first use (no work at module scope).
import wasmModule from "../pkg/captaindata_poller_bg.wasm";
import * as glue from "../pkg/captaindata_poller.js";
import { createApi } from "./poller.js";

export const { JobPoller, preload, pollStep, scheduleWorkflow, classifyWebhook, classifyV4Status } = createApi({
  poll: { load: () => (glue.initSync({ module: wasmModule }), glue), source: "the bundled captaindata_poller_bg.wasm", sync: true },
});
export { CaptainDataError } from "./errors.js";
export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
