// Node ≥ 20. The module loads synchronously on first use (the first `new JobPoller`,
// pollStep, scheduleWorkflow or preload()), not at import: a server that renders pages, or a
// CLI that only prints its help, imports the package for nothing; a bad option still throws
// from the constructor. The bytes are imported as a JS module (base64, written by the build),
// not read from a file next to this one: a server bundle (SvelteKit, Next.js route handlers)
// carries what is imported, and moves this file away from pkg/.
import wasmBase64 from "../pkg/captaindata_poller_bg_wasm.js";
import * as glue from "../pkg/captaindata_poller.js";
import { createApi } from "./poller.js";

const load = () => (glue.initSync({ module: Buffer.from(wasmBase64, "base64") }), glue);

export const { JobPoller, preload, pollStep, scheduleWorkflow, classifyWebhook, classifyV4Status } = createApi({
  poll: { load, source: "the package's inlined module (pkg/captaindata_poller_bg_wasm.js)", sync: true },
});
export { CaptainDataError } from "./errors.js";
export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
