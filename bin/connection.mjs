// Where the credentials and the API root come from: the environment, `--api-key-file`,
// `--project-id`, `--base-url`, and for a proxy (the project's worker) `--read-token` and
// `--header`. They are only ever handed to the package (which sends them in headers); every
// text the CLI prints goes through `redact` as a second guard, and `access` says where each
// one came from, so that a message can name the variable or flag to fix.
import { readFile } from "node:fs/promises";
import { UsageError } from "./usage-error.mjs";

/** The worker's header for a run's read token (worker/src/access.js READ_TOKEN_HEADER). */
export const READ_TOKEN_HEADER = "x-read-token";

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `--header "name: value"` → `[name, value]`. The message of a refusal never holds the value:
 * it may be a secret.
 */
export function parseHeader(text, flag = "--header") {
  const colon = text.indexOf(":");
  const name = colon === -1 ? "" : text.slice(0, colon).trim();
  if (colon === -1 || !TOKEN.test(name)) {
    const why = colon === -1 ? "no colon" : "the text before the colon is not a header name";
    throw new UsageError(`${flag}: expected "name: value", e.g. --header "x-read-token: …" (${why})`);
  }
  const value = text.slice(colon + 1).trim();
  // A line break or NUL would split the request; fetch refuses them, and we say which flag.
  if (/[\0\r\n]/.test(value)) throw new UsageError(`${flag} ${name}: the value holds a line break or NUL`);
  return [name.toLowerCase(), value];
}

/**
 * The `--header` values, whichever way they were given: `--header "name: value"`, `--header
 * @FILE` (one "name: value" per line, as curl reads it; blank lines and `#` comments skipped)
 * and `--header-env "name: VARIABLE"` (the value from the environment). A file or a variable
 * keeps a secret out of argv, which other users of the machine see in the process list.
 * @returns {Promise<[string, string][]>}
 */
async function headerPairs(values, env) {
  const pairs = [];
  for (const text of values.header ?? []) {
    if (!text.startsWith("@")) {
      pairs.push(parseHeader(text));
      continue;
    }
    const file = text.slice(1);
    let content;
    try {
      content = await readFile(file, "utf8");
    } catch (error) {
      throw new UsageError(`--header @${file}: cannot read it (${error.code ?? error.message})`);
    }
    const lines = content.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
    if (lines.length === 0) throw new UsageError(`--header @${file}: the file holds no "name: value" line`);
    for (const [i, line] of lines.entries()) pairs.push(parseHeader(line, `--header @${file} (line ${i + 1})`));
  }
  for (const text of values["header-env"] ?? []) {
    const [name, variable] = parseHeader(text, "--header-env");
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
      throw new UsageError(`--header-env ${name}: expected "name: VARIABLE", the name of an environment variable`);
    }
    const value = env[variable];
    if (value === undefined || value === "") throw new UsageError(`--header-env ${name}: the variable ${variable} is not set`);
    pairs.push([name, parseHeader(`${name}: ${value}`, `--header-env ${name} (${variable})`)[1]]);
  }
  return pairs;
}

/**
 * `http://` carries the key or a read token in clear text: only to this machine. The package
 * refuses it too; the CLI says so first, in its own words, before any request.
 */
export function checkCleartext(baseUrl) {
  const url = new URL(baseUrl);
  if (url.protocol !== "http:") return;
  const host = url.hostname.toLowerCase();
  const loopback = host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  if (!loopback) {
    throw new UsageError(`--base-url ${url.origin}: http:// would send the credentials in clear text to another machine; use https:// (http:// is for localhost, 127.0.0.1 or [::1] only)`);
  }
}

/** The path of `--base-url` must end in a version segment (`/v3`): without one, every path is a 404. */
function checkBaseUrl(baseUrl) {
  if (!URL.canParse(baseUrl)) throw new UsageError(`--base-url: not a URL (got ${JSON.stringify(baseUrl)}); e.g. http://127.0.0.1:8080/v3`);
  const url = new URL(baseUrl);
  const shown = `${url.origin}${url.pathname}`; // no user:password, query or fragment in a message
  const last = url.pathname.split("/").filter(Boolean).at(-1) ?? "";
  if (["http:", "https:"].includes(url.protocol) && !/^v\d+$/i.test(last)) {
    const suggested = `${url.origin}${url.pathname.replace(/\/+$/, "")}/v3`;
    throw new UsageError(`--base-url ${shown}: the path has no API version; the API root ends in one, e.g. ${suggested}`);
  }
}

/**
 * @typedef {{ keyFrom: string | null, projectFrom: string | null, tokenFrom: string | null,
 *   headerNames: string[], proxy: boolean, secrets: [string, string][] }} Access
 * `keyFrom`: "CAPTAINDATA_API_KEY" or "--api-key-file FILE" (null: no key); `projectFrom`,
 * `tokenFrom` likewise; `headerNames`: the `--header` names; `proxy`: `--base-url` given;
 * `secrets`: `[value, what to print instead]`.
 */

/** The key and where it came from: `--api-key-file FILE` wins over CAPTAINDATA_API_KEY. */
async function readApiKey(values, env) {
  const file = values["api-key-file"];
  if (file === undefined) {
    const apiKey = env.CAPTAINDATA_API_KEY || undefined;
    return { apiKey, keyFrom: apiKey === undefined ? null : "CAPTAINDATA_API_KEY" };
  }
  let apiKey;
  try {
    apiKey = (await readFile(file, "utf8")).trim();
  } catch (error) {
    throw new UsageError(`--api-key-file ${file}: cannot read it (${error.code ?? error.message})`);
  }
  if (apiKey === "") throw new UsageError(`--api-key-file ${file}: the file is empty`);
  return { apiKey, keyFrom: `--api-key-file ${file}` };
}

/** `--flag` when given, else the variable when set (`when`: whether the variable counts here). */
function flagOrVariable(values, flag, env, variable, when = true) {
  if (values[flag] !== undefined) return { value: values[flag], from: `--${flag}` };
  const value = when ? env[variable] || undefined : undefined;
  return { value, from: value === undefined ? null : variable };
}

/** The API itself (by default or named): it takes the key, never a proxy's credentials. */
const isTheApi = (baseUrl) => baseUrl === undefined || /(^|\.)captaindata\.com?$/i.test(new URL(baseUrl).hostname);

/**
 * @param {Record<string, any>} values parsed flags
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{ connection: { apiKey?: string, projectId?: string, baseUrl?: string,
 *   headers?: Record<string, string> }, access: Access }>}
 */
export async function connectionFrom(values, env) {
  let { apiKey, keyFrom } = await readApiKey(values, env);
  const { value: projectId, from: projectFrom } = flagOrVariable(values, "project-id", env, "CAPTAINDATA_PROJECT_ID");
  const baseUrl = values["base-url"];
  if (baseUrl !== undefined) {
    checkBaseUrl(baseUrl);
    checkCleartext(baseUrl);
  }
  // CAPTAINDATA_READ_TOKEN, left set for the worker, is not sent to the API itself.
  const { value: readToken, from: tokenFrom } = flagOrVariable(values, "read-token", env, "CAPTAINDATA_READ_TOKEN", baseUrl !== undefined);
  if (readToken === "") throw new UsageError("--read-token: the token is empty");
  if (baseUrl === undefined && readToken !== undefined) {
    throw new UsageError(`${tokenFrom}: a read token is for the worker that serves the run (give its URL with --base-url); the API itself takes CAPTAINDATA_API_KEY`);
  }
  const headers = await headerPairs(values, env);
  const theApi = isTheApi(baseUrl);
  // The real API always needs the key. Behind a proxy (--base-url) the key may live on the
  // proxy, which then checks credentials of its own: a read token or a header says so.
  if (apiKey === undefined && (theApi || (readToken === undefined && headers.length === 0))) {
    const proxy = theApi ? "" : "; through a proxy that holds the key (such as the project's worker), pass what it checks instead: --read-token TOKEN (or CAPTAINDATA_READ_TOKEN) or --header \"name: value\"";
    throw new UsageError(`no API key: set CAPTAINDATA_API_KEY or pass --api-key-file FILE${proxy}`);
  }
  // With a run's read token, however given (--read-token, CAPTAINDATA_READ_TOKEN, or as the
  // x-read-token header), the worker holds the key: the one in the environment (set for the
  // API) stays home, and its project with it. A key given for this command (--api-key-file)
  // is sent as asked.
  const tokenGiven = readToken !== undefined || headers.some(([name]) => name === READ_TOKEN_HEADER);
  if (tokenGiven && !theApi && keyFrom === "CAPTAINDATA_API_KEY") [apiKey, keyFrom] = [undefined, null];
  // The API refuses a key without its project; a proxy may add the project itself.
  if (apiKey !== undefined && projectId === undefined && theApi) {
    throw new UsageError("no project id: set CAPTAINDATA_PROJECT_ID or pass --project-id ID");
  }
  const sentProject = apiKey !== undefined || projectFrom === "--project-id" ? projectId : undefined;
  const sent = Object.fromEntries(headers);
  if (readToken !== undefined) sent[READ_TOKEN_HEADER] = readToken;
  const secrets = [
    [apiKey, "[API key]"],
    [env.CAPTAINDATA_API_KEY, "[API key]"],
    [readToken, "[read token]"],
    ...headers.map(([name, value]) => [value, `[--header ${name}]`]),
    [projectId, "[project id]"],
  ].filter(([value]) => typeof value === "string" && value.length >= MIN_SECRET_LENGTH);
  const connection = { apiKey, projectId: sentProject, baseUrl, headers: Object.keys(sent).length > 0 ? sent : undefined };
  return {
    connection: Object.fromEntries(Object.entries(connection).filter(([, v]) => v !== undefined)),
    access: { keyFrom, projectFrom: sentProject === undefined ? null : projectFrom, tokenFrom, headerNames: headers.map(([name]) => name), proxy: baseUrl !== undefined, secrets },
  };
}

/** Shorter values are not hidden: replacing every "1" or "on" in a message would garble it, and hide nothing. */
const MIN_SECRET_LENGTH = 4;

/** A function that replaces every occurrence of each secret (`[value, label]`) in a text, longest first. */
export function redactor(secrets) {
  // Sorted at each call: a secret learnt later (a v4 launch's read token) joins the list.
  return (text) =>
    secrets
      .filter(([value]) => value)
      .sort(([a], [b]) => b.length - a.length)
      .reduce((out, [value, label]) => out.replaceAll(value, label), String(text));
}

/** Which flag sets each JobPoller / scheduleWorkflow option, to name it in an error. */
const FLAG_OF_OPTION = {
  intervalMs: "--interval",
  maxDurationMs: "--timeout",
  baseUrl: "--base-url",
  cursor: "--cursor / --state",
  apiKey: "CAPTAINDATA_API_KEY / --api-key-file",
  projectId: "CAPTAINDATA_PROJECT_ID / --project-id",
  headers: "--header / --read-token",
  jobUid: "<jobUid>",
  workflowUid: "<workflowUid>",
};
// camelCase names are unambiguous in running text; `cursor` and `headers` only in backticks.
const BARE = ["intervalMs", "maxDurationMs", "baseUrl", "apiKey", "projectId", "jobUid", "workflowUid"];

/** A text of the package's in the CLI's words: option names become the flags that set them. */
export function inFlagTerms(text) {
  return String(text)
    .replace("a string from poller.cursor", "a cursor as a resume command prints it (the package's poller.cursor)")
    .replace(/`(\w+)`/g, (whole, option) => FLAG_OF_OPTION[option] ?? whole)
    .replace(new RegExp(`\\b(${BARE.join("|")})\\b`, "g"), (option) => FLAG_OF_OPTION[option]);
}

/**
 * The package's TypeError for an option (``Expected `intervalMs` to be …``) as a usage error
 * naming the flag: "--interval: expected …".
 */
export function optionError(error) {
  const option = /`(\w+)`/.exec(error.message)?.[1];
  const flag = FLAG_OF_OPTION[option];
  if (!flag) return new UsageError(inFlagTerms(error.message));
  const rest = error.message.replace(/^Expected `\w+` to be /, "expected ");
  return new UsageError(`${flag}: ${inFlagTerms(rest)}`);
}
