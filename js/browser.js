// Pages (<script type="module">), Web Workers and bundlers. Importing this file loads nothing:
// the .wasm is fetched on first use (start(), pollStep, scheduleWorkflow) or by preload(), so
// the page renders without waiting for it, and keeps working if it cannot be loaded.
// Two modules: the one a JobPoller runs on, and the whole one, with pollStep and
// scheduleWorkflow too, loaded (with its glue) only when a page first calls one of them.
// Named imports, not `* as`: the bundle then leaves out what a page never calls (initSync).
import init, { JobPoller as WasmJobPoller, classifyWebhook as classify } from "../pkg/captaindata_poller_poll.js";
import { createApi } from "./poller.js";
import { shareAcrossTabs, sharingRole } from "./tabs.js";

// Literal `new URL(…, import.meta.url)`s: bundlers (Vite, webpack, esbuild) copy the files.
const POLL_WASM_URL = new URL("../pkg/captaindata_poller_poll_bg.wasm", import.meta.url);
const WHOLE_WASM_URL = new URL("../pkg/captaindata_poller_bg.wasm", import.meta.url);

/** Fetches a module ourselves, so a 404 reads "HTTP 404", not a compile error. */
async function fetchWasm(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`);
  return response;
}

async function loadPoll() {
  await init({ module_or_path: fetchWasm(POLL_WASM_URL) });
  return { JobPoller: WasmJobPoller, classifyWebhook: classify };
}

async function loadWhole() {
  const whole = await import("../pkg/captaindata_poller.js");
  await whole.default({ module_or_path: fetchWasm(WHOLE_WASM_URL) });
  return whole;
}

// Tabs of one origin polling the same run share one poller (js/tabs.js).
export const { JobPoller, preload, pollStep, scheduleWorkflow, classifyWebhook, classifyV4Status } = createApi({
  poll: { load: loadPoll, source: POLL_WASM_URL.href },
  whole: { load: loadWhole, source: WHOLE_WASM_URL.href },
  share: shareAcrossTabs,
  roleOf: sharingRole,
});
export { CaptainDataError } from "./errors.js";
export { ERROR_CODES, FINAL_ERROR_CODES, isFinalError } from "./error-codes.js";
