// Where the page polls: the simulator on this origin (default) or a real API / proxy.
// The base URL and project id are remembered (localStorage); the key only for this tab
// (sessionStorage), so it is gone when the tab closes.
import { SIM_CONNECTION } from "./simulator-client.js";

const KEY = "captaindata-poller-demo:settings";
const SECRET_KEY = "captaindata-poller-demo:api-key";
export const DEFAULT_BASE_URL = "https://api.captaindata.co/v3";

/** @returns {{ mode: "sim" | "api", baseUrl: string, projectId: string, apiKey: string }} */
export function loadSettings() {
  let stored = {};
  try {
    stored = JSON.parse(localStorage.getItem(KEY) ?? "{}") ?? {};
  } catch {
    stored = {};
  }
  return {
    mode: stored.mode === "api" ? "api" : "sim",
    baseUrl: typeof stored.baseUrl === "string" ? stored.baseUrl : "",
    projectId: typeof stored.projectId === "string" ? stored.projectId : "",
    apiKey: sessionStorage.getItem(SECRET_KEY) ?? "",
  };
}

export function saveSettings({ mode, baseUrl, projectId, apiKey }) {
  localStorage.setItem(KEY, JSON.stringify({ mode, baseUrl, projectId }));
  if (apiKey) sessionStorage.setItem(SECRET_KEY, apiKey);
  else sessionStorage.removeItem(SECRET_KEY);
}

/** JobPoller connection options for the settings; empty fields are left out (a proxy adds them). */
export function connectionFor(settings) {
  if (settings.mode === "sim") return { baseUrl: `${location.origin}/v3`, ...SIM_CONNECTION };
  const connection = { baseUrl: settings.baseUrl || DEFAULT_BASE_URL };
  if (settings.apiKey) connection.apiKey = settings.apiKey;
  if (settings.projectId) connection.projectId = settings.projectId;
  return connection;
}

/** One line for the header: where requests go (never the key). */
export function describeMode(settings) {
  if (settings.mode === "sim") return "Polling the built-in simulator on this machine (offline). Settings switch to a real API or proxy.";
  const base = settings.baseUrl || DEFAULT_BASE_URL;
  return `Polling ${base}${settings.apiKey ? " with the key from Settings" : " (no key: a proxy must add it)"}.`;
}
