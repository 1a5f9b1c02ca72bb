// The CLI's view of the package's requests (its `fetch` option): counted for the progress
// line, and a request that got no answer named in a terminal's words ("connection refused to
// 127.0.0.1:9"). A refusal before anything ever answered means nothing listens there: the
// command says so at once instead of retrying for many seconds.

const REASONS = {
  ECONNREFUSED: (where) => `connection refused to ${where}`,
  ENOTFOUND: (where) => `no such host: ${where} (DNS lookup failed)`,
  EAI_AGAIN: (where) => `the name of ${where} could not be resolved now (DNS)`,
  ECONNRESET: (where) => `the connection to ${where} was reset`,
  EPIPE: (where) => `the connection to ${where} was closed`,
  UND_ERR_SOCKET: (where) => `the connection to ${where} was closed before an answer`,
  ETIMEDOUT: (where) => `no answer from ${where} (timed out connecting)`,
  UND_ERR_CONNECT_TIMEOUT: (where) => `no answer from ${where} (timed out connecting)`,
  EHOSTUNREACH: (where) => `${where} is unreachable (no route to the host)`,
  ENETUNREACH: (where) => `${where} is unreachable (no network)`,
};

/** `host:port` of a request's URL (the port the scheme implies when none is written). */
export function hostAndPort(input) {
  try {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    return `${url.hostname.includes(":") ? `[${url.hostname}]` : url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`;
  } catch {
    return "the server";
  }
}

/**
 * Why `fetch` rejected, for a person: `{ code, text }`. Node's fetch rejects with a bare
 * "fetch failed" whose `cause` holds the socket's code.
 */
export function noAnswerReason(error, input) {
  const cause = error?.cause;
  const code = cause?.code ?? cause?.cause?.code ?? error?.code ?? null;
  const where = hostAndPort(input);
  // Node's fetch will not connect to some ports at all (the Fetch standard's "bad ports").
  if (cause?.message === "bad port") return { code: "BAD_PORT", text: `fetch refuses to connect to port ${where.split(":").at(-1)} (${where}): it is on the Fetch standard's list of blocked ports; use another` };
  const named = REASONS[code];
  if (named) return { code, text: named(where) };
  if (typeof code === "string" && /CERT|SSL|TLS/.test(code)) return { code, text: `the TLS certificate of ${where} was refused (${code})` };
  return { code, text: `no answer from ${where} (${code ?? cause?.message ?? error?.message ?? "network error"})` };
}

/**
 * A `fetch` for the package that counts requests and failed attempts (429, 5xx, no answer).
 * `onChange()` after every change of the counts; `onNoAnswer(reason, { first })` when a request
 * got no answer (`first`: nothing ever answered before).
 * @returns {{ fetch: typeof fetch, seen: { requests: number, retries: number, answered: number,
 *   lastNoAnswer: null | { code: string | null, text: string } } }}
 */
export function observedFetch({ onChange = () => {}, onNoAnswer = () => {}, base = globalThis.fetch } = {}) {
  const seen = { requests: 0, retries: 0, answered: 0, lastNoAnswer: null };
  const observed = async (input, init) => {
    seen.requests += 1;
    onChange();
    let response;
    try {
      response = await base(input, init);
    } catch (error) {
      // Aborted by the poller (stop, its request timeout): not the server's doing.
      if (init?.signal?.aborted !== true) {
        seen.retries += 1;
        seen.lastNoAnswer = noAnswerReason(error, input);
        onNoAnswer(seen.lastNoAnswer, { first: seen.answered === 0 });
        onChange();
      }
      throw error;
    }
    seen.answered += 1;
    seen.lastNoAnswer = null;
    if (response.status === 429 || response.status >= 500) {
      seen.retries += 1;
      onChange();
    }
    return response;
  };
  return { fetch: observed, seen };
}

/**
 * Whether a request with no answer ends the command at once: a port fetch never connects to,
 * or a refused connection before anything ever answered (nothing listens there; retrying
 * would only make the person wait). A refusal later, mid-run, is retried like any failure.
 */
export const failsAtOnce = (reason, { first }) => reason.code === "BAD_PORT" || (first && reason.code === "ECONNREFUSED");

/** The error line for a command that `failsAtOnce`, naming `--base-url` when it was given. */
export function refusedText(reason, values) {
  const at = values["base-url"] === undefined ? "" : ` (--base-url ${values["base-url"]})`;
  return reason.code === "BAD_PORT" ? `${reason.text}${at}` : `${reason.text}${at}: is the server running, at that address and port?`;
}
