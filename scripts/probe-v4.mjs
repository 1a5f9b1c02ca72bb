// The v4 part of `npm run probe` (scripts/probe.mjs): asks a live Captain Data v4 API what
// DESIGN §7 takes from its documentation — the auth header, the async launch's answer, the run
// statuses, the shape of the deliveries list, the replay limit — and says what it could not
// confirm. It launches a run only when given an action; it replays only that run's deliveries.
//
// Environment: CAPTAINDATA_V4_API_KEY (turns the v4 checks on), CAPTAINDATA_V4_BASE_URL (default
// https://api.captaindata.com/v4), CAPTAINDATA_V4_RUN_UID (a run of yours: read only),
// CAPTAINDATA_V4_ACTION (an action to launch a tiny async run with, e.g. one that needs a single
// LinkedIn URL), CAPTAINDATA_V4_INPUTS (its inputs, JSON; default `[{}]`),
// CAPTAINDATA_V4_CALLBACK_URL (where its callbacks go; default a host that receives nothing, so
// its deliveries fail and can be replayed). The key is sent only in the X-API-Key header.

export const DEFAULT_V4_BASE_URL = "https://api.captaindata.com/v4";
const NOWHERE = "https://captaindata-poller-probe.example/callbacks";
const TERMINAL = new Set(["INVALID", "STOPPED", "FAILED", "PARTIAL_SUCCEEDED", "SUCCEEDED"]);
const PROBE_HEADER = "x-captaindata-poller-probe";
const MAX_REPLAYS_TRIED = 5;

/** The v4 settings, or null when no v4 key is given. Throws a message naming a bad setting. */
export function probeV4Config(env) {
  const apiKey = env.CAPTAINDATA_V4_API_KEY ?? "";
  if (!apiKey) return null;
  let inputs = [{}];
  if (env.CAPTAINDATA_V4_INPUTS) {
    try {
      inputs = JSON.parse(env.CAPTAINDATA_V4_INPUTS);
    } catch {
      throw new Error("CAPTAINDATA_V4_INPUTS is not JSON");
    }
    if (!Array.isArray(inputs)) throw new Error("CAPTAINDATA_V4_INPUTS must be a JSON array");
  }
  return {
    apiKey,
    baseUrl: (env.CAPTAINDATA_V4_BASE_URL || DEFAULT_V4_BASE_URL).replace(/\/+$/, ""),
    runUid: env.CAPTAINDATA_V4_RUN_UID || "",
    action: env.CAPTAINDATA_V4_ACTION || "",
    inputs,
    callbackUrl: env.CAPTAINDATA_V4_CALLBACK_URL || NOWHERE,
  };
}

/**
 * The v4 checks; resolves with `[point, what the API answered]` rows. `exchange(path, init)`
 * is the probe's one HTTP exchange (`{ status, json, text }`), `shown(answer)` its key-free
 * rendering, `settings` the probe's wait and cadence.
 */
export async function probeV4(v4, { exchange, shown, waitMs, pollMs }) {
  const findings = [];
  const note = (point, answer) => findings.push([`v4 ${point}`, answer]);
  const call = (path, init = {}) =>
    exchange("", { ...init, url: `${v4.baseUrl}${path}`, headers: init.headers ?? { "x-api-key": v4.apiKey } });

  const listPath = "/runs/callbacks?limit=1";
  const [keyed, without, v3Style] = [
    await call(listPath),
    await call(listPath, { headers: {} }),
    await call(listPath, { headers: { authorization: `x-api-key ${v4.apiKey}` } }),
  ];
  note("auth (GET /runs/callbacks)", `X-API-Key: ${keyed.status}; no key: ${without.status}; v3's Authorization header instead: ${v3Style.status}`);
  note("error body keys", errorKeys(without) ?? errorKeys(v3Style) ?? "no error body seen");

  let runUid = v4.runUid;
  let launched = false;
  if (v4.action) {
    const body = { inputs: v4.inputs, callback: { url: v4.callbackUrl, headers: { [PROBE_HEADER]: "1" } } };
    const answer = await call(`/actions/${encodeURIComponent(v4.action)}/async`, { method: "POST", body });
    const found = launchedUid(answer.json);
    note(
      "launch (POST /actions/{action}/async, callback headers as an object)",
      `${answer.status}, keys ${keysOf(answer.json)}${found ? `; the run uid is in \`${found.at}\`` : `; no run uid found: ${shown(answer)}`}`,
    );
    if (found) {
      runUid = found.uid;
      launched = true;
    }
  } else {
    note("launch (POST /actions/{action}/async)", "not asked (set CAPTAINDATA_V4_ACTION to launch a tiny run)");
  }

  if (runUid) {
    const seen = await followStatus(call, runUid, { waitMs: launched ? waitMs : 0, pollMs });
    note("GET /runs/{uid}", seen.last.status === 200 ? `200, keys ${keysOf(seen.last.json)}` : shown(seen.last));
    note(`statuses seen (${launched ? "the launched run" : "your run"})`, seen.statuses.join(" → ") || "none");
    await probeDeliveries(call, runUid, note, { replay: launched });
  } else {
    note("GET /runs/{uid}", "no run (set CAPTAINDATA_V4_RUN_UID or CAPTAINDATA_V4_ACTION)");
  }
  note(
    "not confirmed here",
    "that callbacks reach the URL with the launch's headers, their body and page size (give CAPTAINDATA_V4_CALLBACK_URL of an HTTPS receiver you watch); " +
      "that an http callback URL or more than 100,000 inputs are refused (not tried: a launch that is accepted would start a run)",
  );
  return findings.map(([point, answer]) => [point, redact(v4.apiKey, answer)]);
}

/** The deliveries list's shape, one delivery's keys, and (on the probe's own run) the replay limit. */
async function probeDeliveries(call, runUid, note, { replay }) {
  const listed = await call(`/runs/callbacks?run_uid=${encodeURIComponent(runUid)}&limit=100&sort=created_at`);
  const items = itemsOf(listed.json);
  if (listed.status !== 200 || !items) {
    note("deliveries list (GET /runs/callbacks?run_uid=)", shown(listed));
    return;
  }
  const statuses = [...new Set(items.map((d) => d?.status))].join(", ") || "none";
  note(
    "deliveries list (GET /runs/callbacks?run_uid=)",
    `200, ${Array.isArray(listed.json) ? "a JSON array" : `an object with keys ${keysOf(listed.json)}`}; ${items.length} for the run (statuses ${statuses}); ` +
      `a delivery's keys: ${keysOf(items[0]) || "none listed"}`,
  );
  const original = items.find((d) => d && d.parent_uid == null && typeof d.uid === "string");
  if (!original) return;
  const one = await call(`/runs/callbacks/${encodeURIComponent(original.uid)}`);
  note("GET /runs/callbacks/{uid}", one.status === 200 ? `200, keys ${keysOf(one.json)}` : shown(one));
  if (!replay) {
    note("replay limit", "not tried on a run the probe did not launch (a replay sends its rows to your receiver again)");
    return;
  }
  const answers = [];
  let firstReplay = null;
  for (let i = 0; i < MAX_REPLAYS_TRIED; i++) {
    const answer = await call(`/runs/callbacks/${encodeURIComponent(original.uid)}/replay`, { method: "POST", body: {} });
    answers.push(answer.status);
    if (answer.status === 200 || answer.status === 201) firstReplay ??= answer.json;
    else break;
  }
  const accepted = answers.filter((s) => s === 200 || s === 201).length;
  const refusal = answers.length > accepted ? ` then ${answers.at(-1)}` : "";
  const fields = firstReplay ? `; a replay's parent_uid ${firstReplay.parent_uid === original.uid ? "is the original" : JSON.stringify(firstReplay.parent_uid ?? null)}, retry_count ${JSON.stringify(firstReplay.retry_count ?? null)}, same batch_uid ${firstReplay.batch_uid === original.batch_uid}` : "";
  note("replay limit (POST /runs/callbacks/{uid}/replay)", `${accepted} accepted${refusal}${fields}`);
  if (firstReplay?.uid) {
    const ofReplay = await call(`/runs/callbacks/${encodeURIComponent(firstReplay.uid)}/replay`, { method: "POST", body: {} });
    note("replay of a replay", `${ofReplay.status}`);
  }
}

/** Follows a run's status (once when `waitMs` is 0): the statuses seen, in order, and the last answer. */
async function followStatus(call, runUid, { waitMs, pollMs }) {
  const deadline = Date.now() + waitMs;
  const statuses = [];
  for (;;) {
    const last = await call(`/runs/${encodeURIComponent(runUid)}`);
    const status = last.json?.status;
    if (typeof status === "string" && statuses.at(-1) !== status) statuses.push(status);
    if (last.status !== 200 || TERMINAL.has(String(status).toUpperCase()) || Date.now() >= deadline) return { last, statuses };
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Where the launch's answer holds the run uid: `run_uid`, `uid`, `run.run_uid` or `run.uid`. */
export function launchedUid(body) {
  for (const [at, value] of [
    ["run_uid", body?.run_uid],
    ["uid", body?.uid],
    ["run.run_uid", body?.run?.run_uid],
    ["run.uid", body?.run?.uid],
  ]) {
    if (typeof value === "string" && value !== "") return { at, uid: value };
  }
  return null;
}

/** The deliveries of a list answer: a JSON array, or the array under `data`, `results`, `items` or `callbacks`. */
export function itemsOf(body) {
  if (Array.isArray(body)) return body;
  for (const key of ["data", "results", "items", "callbacks"]) if (Array.isArray(body?.[key])) return body[key];
  return null;
}

const keysOf = (value) => (value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value).join(", ") : "");
const errorKeys = (answer) => (answer.status >= 400 && keysOf(answer.json) ? `{${keysOf(answer.json)}}` : null);
const redact = (key, text) => String(text).split(key).join("[API key]");
