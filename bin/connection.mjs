// Where the credentials and the API root come from: the environment, `--api-key-file`,
// `--project-id`, `--base-url`. The key is only ever handed to the package (which sends it in
// a header); every text the CLI prints goes through `redact` as a second guard.
import { readFile } from "node:fs/promises";
import { UsageError } from "./usage-error.mjs";

/**
 * @param {Record<string, any>} values parsed flags
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{ apiKey?: string, projectId?: string, baseUrl?: string }>}
 */
export async function connectionFrom(values, env) {
  let apiKey = env.CAPTAINDATA_API_KEY || undefined;
  const keyFile = values["api-key-file"];
  if (keyFile !== undefined) {
    try {
      apiKey = (await readFile(keyFile, "utf8")).trim();
    } catch (error) {
      throw new UsageError(`--api-key-file ${keyFile}: cannot read it (${error.code ?? error.message})`);
    }
    if (apiKey === "") throw new UsageError(`--api-key-file ${keyFile}: the file is empty`);
  }
  const projectId = values["project-id"] ?? (env.CAPTAINDATA_PROJECT_ID || undefined);
  const baseUrl = values["base-url"];
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) {
    throw new UsageError(`--base-url: not a URL (got ${JSON.stringify(baseUrl)}); e.g. http://127.0.0.1:8080/v3`);
  }
  // Behind a proxy (--base-url) the key may live on the proxy; the real API always needs it.
  if (apiKey === undefined && baseUrl === undefined) {
    throw new UsageError("no API key: set CAPTAINDATA_API_KEY or pass --api-key-file FILE");
  }
  if (apiKey !== undefined && projectId === undefined) {
    throw new UsageError("no project id: set CAPTAINDATA_PROJECT_ID or pass --project-id ID");
  }
  return { apiKey, projectId, baseUrl };
}

/** A function that replaces every occurrence of `secret` in a text. */
export function redactor(secret) {
  if (!secret) return (text) => text;
  return (text) => String(text).replaceAll(secret, "[API key]");
}

/** Which flag sets each JobPoller / scheduleWorkflow option, to name it in an error. */
const FLAG_OF_OPTION = {
  intervalMs: "--interval",
  maxDurationMs: "--timeout",
  baseUrl: "--base-url",
  cursor: "--cursor / --state",
  apiKey: "CAPTAINDATA_API_KEY / --api-key-file",
  projectId: "CAPTAINDATA_PROJECT_ID / --project-id",
  jobUid: "<jobUid>",
  workflowUid: "<workflowUid>",
};

/** The package's TypeError for an option (``Expected `intervalMs` …``) as a usage error naming the flag. */
export function optionError(error) {
  const option = /`(\w+)`/.exec(error.message)?.[1];
  const flag = FLAG_OF_OPTION[option];
  return new UsageError(flag ? `${flag}: ${error.message}` : error.message);
}
