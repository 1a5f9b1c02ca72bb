// Pages (<script type="module">), Web Workers and bundlers. Importing this file loads nothing:
// the .wasm is fetched on first use (start(), pollStep, scheduleWorkflow) or by preload(), so
// the page renders without waiting for it, and keeps working if it cannot be loaded.
import init, * as glue from "../pkg/captaindata_poller.js";
import { createApi } from "./poller.js";
import { shareAcrossTabs, sharingRole } from "./tabs.js";

// A literal `new URL(…, import.meta.url)`: bundlers (Vite, webpack, esbuild) copy the file.
const WASM_URL = new URL("../pkg/captaindata_poller_bg.wasm", import.meta.url);

/** Fetches the module ourselves, so a 404 reads "HTTP 404", not a compile error. */
async function fetchWasm() {
  const response = await fetch(WASM_URL);
  if (!response.ok) throw new Error(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`);
  return response;
}

// Tabs of one origin polling the same run share one poller (js/tabs.js).
export const { JobPoller, preload, pollStep, scheduleWorkflow, classifyWebhook } = createApi({
  glue,
  instantiate: () => init({ module_or_path: fetchWasm() }),
  source: WASM_URL.href,
  share: shareAcrossTabs,
  roleOf: sharingRole,
});
export { CaptainDataError } from "./errors.js";
export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
