// The worker's Captain Data v4 settings: where the v4 API is, the worker's own public origin
// (the callbacks' URL is built from it) and the safety net's cadence. A wrong one is named,
// never shown (a URL could hold credentials).
import { ConfigError, secret } from "./config.js";

const DEFAULTS = Object.freeze({
  CAPTAINDATA_V4_BASE_URL: "https://api.captaindata.com/v4",
  // While a v4 run is active its callbacks bring the rows: the status is only the safety net.
  V4_STATUS_INTERVAL_MS: 60000,
  // Once it is over: how soon the deliveries are listed again while replays are on their way.
  V4_RECHECK_MS: 5000,
  // Once it is over: how long the safety net goes on without progress (no batch stored) before
  // the run ends with the batches it could not recover named (and RETENTION_DAYS starts).
  V4_GIVE_UP_MS: 3_600_000,
});
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The path Captain Data POSTs a v4 run's callbacks to, on `PUBLIC_URL`. */
export const CALLBACK_PATH = "/v4/callbacks";
/**
 * The header that carries a run's own callback secret (random per launch, never WEBHOOK_SECRET),
 * given to Captain Data at launch and sent back by it with each callback of that run.
 */
export const CALLBACK_HEADER = "x-callback-secret";

/** An absolute https URL, or http on loopback only (a local simulator or worker). */
function endpoint(env, name) {
  const raw = env[name];
  let url = null;
  try {
    url = new URL(String(raw));
  } catch {
    // refused below
  }
  const ok = url && (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname)));
  if (!ok) throw new ConfigError(name, `The worker setting ${name} must be an absolute https URL (http only on loopback)`);
  return String(raw).replace(/\/+$/, "");
}

function count(env, name, least = 0) {
  const raw = env[name];
  if (raw === undefined || raw === "") return DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < least) throw new ConfigError(name, `The worker setting ${name} must be an integer ≥ ${least}`);
  return value;
}

// 0 would end every run at its first recheck: the give-up time is at least 1 ms.
const giveUpMs = (env) => count(env, "V4_GIVE_UP_MS", 1);

/**
 * The v4 settings; throws a ConfigError naming the first wrong one. `apiKey`:
 * CAPTAINDATA_V4_API_KEY, or CAPTAINDATA_API_KEY when the account uses one key for both.
 */
export function v4Settings(env) {
  const base = env.CAPTAINDATA_V4_BASE_URL ? endpoint(env, "CAPTAINDATA_V4_BASE_URL") : DEFAULTS.CAPTAINDATA_V4_BASE_URL;
  return {
    baseUrl: base,
    apiKey: env.CAPTAINDATA_V4_API_KEY ? secret(env, "CAPTAINDATA_V4_API_KEY") : secret(env, "CAPTAINDATA_API_KEY"),
    statusIntervalMs: count(env, "V4_STATUS_INTERVAL_MS"),
    recheckMs: count(env, "V4_RECHECK_MS"),
    giveUpMs: giveUpMs(env),
  };
}

/**
 * The callback Captain Data is given at launch: the worker's URL and the run's own secret in a
 * header (a header, not the URL: URLs end up in logs and in the deliveries list).
 */
export function v4Callback(env, callbackSecret) {
  if (!env.PUBLIC_URL) throw new ConfigError("PUBLIC_URL", "The worker setting PUBLIC_URL (its own https origin) is needed to launch v4 runs");
  const origin = endpoint(env, "PUBLIC_URL");
  return { url: `${origin}${CALLBACK_PATH}`, headers: { [CALLBACK_HEADER]: callbackSecret } };
}

/**
 * The v4 settings that are set but wrong, for GET /health (`polling`: true, they stop v4 runs'
 * safety net). An unset PUBLIC_URL is no problem until a v4 run is launched.
 * @returns {{ setting: string, message: string, polling: boolean }[]}
 */
export function v4Problems(env) {
  const problems = [];
  const check = (name, read) => {
    if (env[name] === undefined || env[name] === "") return;
    try {
      read();
    } catch (error) {
      if (error instanceof ConfigError) problems.push({ setting: error.setting, message: error.message, polling: true });
    }
  };
  check("CAPTAINDATA_V4_BASE_URL", () => endpoint(env, "CAPTAINDATA_V4_BASE_URL"));
  check("PUBLIC_URL", () => endpoint(env, "PUBLIC_URL"));
  check("V4_STATUS_INTERVAL_MS", () => count(env, "V4_STATUS_INTERVAL_MS"));
  check("V4_RECHECK_MS", () => count(env, "V4_RECHECK_MS"));
  check("V4_GIVE_UP_MS", () => giveUpMs(env));
  return problems;
}
