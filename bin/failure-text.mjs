// A failed request or run in the terminal's words: the package's message (its option names
// turned into flags, its advice for pages left out), then what to fix, naming the variable or
// flag that holds it: "the API key was refused: check CAPTAINDATA_API_KEY".
import { inFlagTerms } from "./connection.mjs";

/**
 * The package's messages may advise a page (CORS, pointing `baseUrl` at a proxy): meaningless
 * in a terminal, where no browser is involved. Such a clause or parenthesis is left out.
 */
export function withoutBrowserAdvice(text) {
  return String(text)
    .replace(/\s*\([^()]*\b(CORS|in a browser)\b[^()]*\)/gi, "")
    .replace(/[;,]\s*[^;,()]*\b(CORS|in a browser)\b[^;()]*/gi, "");
}

/** "CAPTAINDATA_READ_TOKEN" or "--read-token", and the --header names: what a proxy checks. */
function proxyCredentials(access) {
  const names = [...(access.tokenFrom ? [access.tokenFrom] : []), ...access.headerNames.map((name) => `--header ${name}`)];
  return names.length > 0 ? names.join(", ") : "--read-token TOKEN (or CAPTAINDATA_READ_TOKEN) or --header \"name: value\"";
}

/** What to fix after an error: a sentence naming the variable or flag, or "". */
export function adviceFor(error, access) {
  const where = access.proxy ? "--base-url" : "the API";
  if (error?.code === "UNAUTHORIZED") {
    const viaProxy = access.proxy && (access.tokenFrom !== null || access.headerNames.length > 0);
    // The worker's 403 for a read: the token does not open this run. It hides whether the run
    // exists, so the job uid is as likely at fault as the token.
    const readRefused = error.status === 403 && (access.tokenFrom !== null || access.headerNames.includes("x-read-token"));
    if (access.proxy && readRefused) {
      const tokenName = access.tokenFrom ?? "--header x-read-token";
      return `the read token does not open this run: check the job uid and ${tokenName} (each run has its own read token, from the worker's /track or its v4 launch; a token also stops opening it once expired or revoked)`;
    }
    if (viaProxy) {
      const token = access.tokenFrom ? " (each run has its own read token, from the worker's /track)" : "";
      return `the server at --base-url refused the credentials: check ${proxyCredentials(access)}${token}${access.keyFrom ? `, and ${access.keyFrom}` : ""}`;
    }
    if (error.status === 403) {
      return `the project was refused: check ${access.projectFrom ?? "CAPTAINDATA_PROJECT_ID"} (the key may belong to another project)`;
    }
    return `the API key was refused: check ${access.keyFrom ?? "CAPTAINDATA_API_KEY"}${access.keyFrom === "CAPTAINDATA_API_KEY" ? " (or pass --api-key-file FILE)" : ""}`;
  }
  if (error?.code === "NOT_FOUND") return `no such run at ${where}: check the job uid${access.proxy ? " and --base-url" : ""}`;
  return "";
}

/**
 * `CODE: message: advice` for a terminal error of the package. `lastNoAnswer`: why the last
 * request got no answer, when it got none (the package's message says only "no response").
 */
export function failureText(error, { access, lastNoAnswer = null }) {
  const code = error?.code ? `${error.code}: ` : "";
  let message = inFlagTerms(withoutBrowserAdvice(error?.message ?? String(error)));
  if (lastNoAnswer && ["RETRIES_EXHAUSTED", "NETWORK_ERROR", "TIMEOUT"].includes(error?.code)) {
    message = `${message}; the last request: ${lastNoAnswer.text}`;
  }
  const advice = adviceFor(error, access);
  const runStatus = error?.runStatus ? ` (run status ${error.runStatus})` : "";
  return `${code}${message}${runStatus}${advice ? `: ${advice}` : ""}`;
}
