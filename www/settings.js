// Where the page polls: the simulator on this origin (default) or a real API / proxy.
// The base URL and project id are remembered (localStorage); the API key and a proxy's read
// token only for this tab (sessionStorage), so they are gone when the tab closes.
import { DEFAULTS } from "captaindata-poller/rules";
import { SIM_CONNECTION } from "./simulator-client.js";

const KEY = "captaindata-poller-demo:settings";
const SECRET_KEY = "captaindata-poller-demo:api-key";
const TOKEN_KEY = "captaindata-poller-demo:read-token";
/** The header the project's worker reads a run's read token from (worker/README.md). */
export const READ_TOKEN_HEADER = "x-read-token";
export const DEFAULT_BASE_URL = DEFAULTS.baseUrl;

/** @returns {{ mode: "sim" | "api", baseUrl: string, projectId: string, apiKey: string, readToken: string }} */
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
    readToken: sessionStorage.getItem(TOKEN_KEY) ?? "",
  };
}

function keepForTab(name, value) {
  if (value) sessionStorage.setItem(name, value);
  else sessionStorage.removeItem(name);
}

export function saveSettings({ mode, baseUrl, projectId, apiKey, readToken }) {
  localStorage.setItem(KEY, JSON.stringify({ mode, baseUrl, projectId }));
  keepForTab(SECRET_KEY, apiKey);
  keepForTab(TOKEN_KEY, readToken);
}

/** JobPoller connection options for the settings; empty fields are left out (a proxy adds them). */
export function connectionFor(settings) {
  if (settings.mode === "sim") return { baseUrl: `${location.origin}/v3`, ...SIM_CONNECTION };
  const connection = { baseUrl: settings.baseUrl || DEFAULT_BASE_URL };
  if (settings.apiKey) connection.apiKey = settings.apiKey;
  if (settings.projectId) connection.projectId = settings.projectId;
  if (settings.readToken) connection.headers = { [READ_TOKEN_HEADER]: settings.readToken };
  return connection;
}

/** One line for the header: where requests go (never the key). */
export function describeMode(settings) {
  if (settings.mode === "sim") return "Polling the built-in simulator on this machine (offline). Settings switch to a real API or proxy.";
  const base = settings.baseUrl || DEFAULT_BASE_URL;
  const how = settings.apiKey ? " with the key from Settings" : settings.readToken ? " with the run's read token (a proxy adds the key)" : " (no key: a proxy must add it)";
  return `Polling ${base}${how}.`;
}
