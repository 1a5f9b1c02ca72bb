// Node adapter: serves the simulator's Fetch-API handler over HTTP (or HTTPS) on loopback only.
import { createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { createSim } from "./index.js";
import { V4_FLAG_OPTIONS, V4SettingError, describeV4Spec, v4SettingsHelp, v4SpecFromFlags, withBareValues } from "./v4-settings.js";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? Buffer.concat(chunks) : undefined;
}

function toRequest(req, body, signal, fallbackHost) {
  // The client's Host header gives the origin of `paging.next`, as a real server behind it would.
  const scheme = req.socket.encrypted ? "https" : "http";
  const url = new URL(req.url ?? "/", `${scheme}://${req.headers.host ?? fallbackHost}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const hasBody = body !== undefined && req.method !== "GET" && req.method !== "HEAD";
  return new Request(url, { method: req.method, headers, body: hasBody ? body : undefined, signal });
}

/** Answers one Node HTTP request with the simulator (exported for servers that mount it, e.g. the demo). */
export async function serve(sim, req, res, fallbackHost) {
  const aborter = new AbortController();
  // The client went away before we answered (e.g. its fetch was aborted): end the slow wait too.
  res.on("close", () => {
    if (!res.writableFinished) aborter.abort(new DOMException("client disconnected", "AbortError"));
  });
  let response;
  try {
    const body = await readBody(req);
    response = await sim.handle(toRequest(req, body, aborter.signal, fallbackHost));
  } catch (e) {
    if (!e?.simDrop && !aborter.signal.aborted) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "simulator error" }));
      return;
    }
    req.socket.destroy();
    return;
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), "content-length": bytes.length });
  res.end(bytes);
}

/**
 * Starts the simulator on 127.0.0.1. With `tls` (`{ key, cert }`, PEM) it answers HTTPS: a test
 * that maps Captain Data's host name to loopback and trusts `cert` runs a command as a user
 * types it, with no `--base-url`.
 * @param {{ port?: number, host?: string, sim?: ReturnType<typeof createSim>, tls?: { key: string | Buffer, cert: string | Buffer } } & import("./index.js").SimOptions} [options]
 * @returns {Promise<{ url: string, origin: string, port: number, sim: ReturnType<typeof createSim>, close(): Promise<void> }>}
 */
export async function startSimServer({ port = 0, host = "127.0.0.1", sim, tls, ...simOptions } = {}) {
  if (!LOOPBACK.has(host)) throw new TypeError(`The simulator binds loopback only (got host ${host})`);
  const theSim = sim ?? createSim(simOptions);
  let fallbackHost = host;
  const answer = (req, res) => {
    serve(theSim, req, res, fallbackHost).catch(() => req.socket.destroy());
  };
  const server = tls ? createTlsServer({ key: tls.key, cert: tls.cert }, answer) : createServer(answer);
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const actualPort = server.address().port;
  const origin = `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${actualPort}`;
  fallbackHost = new URL(origin).host;
  return {
    url: `${origin}/v3`,
    origin,
    port: actualPort,
    sim: theSim,
    close() {
      theSim.dispose();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const HELP = `Usage: node sim/server.mjs [options]     (npm run sim -- [options])

Serves the simulated Captain Data v3 API on 127.0.0.1 and creates one demo run; beside it the
v4 async API (POST /v4/actions/{name}/async, X-API-Key), whose runs the --v4-… flags shape.

Options:
  --port N            the port (default: the PORT variable, else 8790; 0: any free port)
  --api-key KEY       the key it accepts, sent as Authorization: x-api-key KEY (default sim-key)
  --project-id ID     the project it accepts, sent as x-project-id (default sim-project)
  --seed N            job uids and fault dice (default 1)
  --rows N            rows of the demo run (default 2000)
  --duration MS       how long the demo run lasts, in ms (default 60000)
  -h, --help          this help

v4 runs launched over HTTP (e.g. --v4-rows 100 --v4-rows-per-callback 10 --v4-lost 0.2 --v4-replays-lost):
${v4SettingsHelp("flag")}

Control routes (no credentials): POST /__sim/jobs (a job spec as JSON), GET /__sim/jobs/{uid},
POST /__sim/jobs/{uid}/start | finish | stop, GET /__sim/stats, GET /__sim/webhooks,
POST /__sim/reset. sim/README.md describes them and the job spec.
`;

const OPTIONS = {
  port: { type: "string" },
  "api-key": { type: "string" },
  "project-id": { type: "string" },
  seed: { type: "string" },
  rows: { type: "string" },
  duration: { type: "string" },
  help: { type: "boolean", short: "h" },
  ...V4_FLAG_OPTIONS,
};

/** `--flag N`: a whole number ≥ 0, or a usage error naming the flag. */
function wholeNumber(flag, text, fallback) {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n)) throw new UsageError(`--${flag}: expected a whole number (got ${JSON.stringify(text)})`);
  return n;
}

class UsageError extends Error {}

/** The command line → the server's options, or `{ help: true }`. */
export function parseServerArgs(argv, env = process.env) {
  let values;
  try {
    ({ values } = parseArgs({ args: withBareValues(argv), options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(error.message.replace(/\. To specify a positional argument.*$/s, ""));
  }
  if (values.help) return { help: true };
  const port = wholeNumber("port", values.port ?? env.PORT, 8790);
  if (port > 65535) throw new UsageError(`--port: expected a port from 0 to 65535 (got ${port})`);
  return {
    port,
    apiKey: values["api-key"] ?? "sim-key",
    projectId: values["project-id"] ?? "sim-project",
    seed: wholeNumber("seed", values.seed, 1),
    rows: wholeNumber("rows", values.rows, 2000),
    durationMs: wholeNumber("duration", values.duration, 60000),
    v4Defaults: v4Spec(values),
  };
}

/** The v4 flags → the v4 run spec, their errors as usage errors. */
function v4Spec(values) {
  try {
    return v4SpecFromFlags(values);
  } catch (error) {
    if (error instanceof V4SettingError) throw new UsageError(error.message);
    throw error;
  }
}

async function main(argv) {
  let options;
  try {
    options = parseServerArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`sim/server.mjs: ${error.message}\nRun node sim/server.mjs --help for the options.\n`);
    process.exit(2);
  }
  if (options.help) {
    process.stdout.write(HELP);
    return;
  }
  const { port, apiKey, projectId, seed, rows, durationMs, v4Defaults } = options;
  const server = await listenOrExit(() => startSimServer({ port, apiKey, projectId, seed, v4Defaults }), "--port (or PORT)", port);
  const { jobUid } = server.sim.createJob({ rows, durationMs });
  console.log(`simulator: ${server.url}  (Authorization: x-api-key ${apiKey}, x-project-id: ${projectId})`);
  console.log(`demo job: ${jobUid}  (GET ${server.url}/jobs/${jobUid}/results)`);
  console.log(
    `control: POST ${server.origin}/__sim/jobs, GET ${server.origin}/__sim/stats, POST ${server.origin}/__sim/reset`,
  );
  console.log(`v4:       POST ${server.origin}/v4/actions/{name}/async (X-API-Key: ${apiKey}): ${describeV4Spec(v4Defaults)}`);
  console.log(
    `watch it: CAPTAINDATA_API_KEY=${apiKey} CAPTAINDATA_PROJECT_ID=${projectId} npx captaindata-poller watch ${jobUid} --base-url ${server.url} --interval 1s`,
  );
}

/**
 * `listen()` → its server, or, when the port is taken, a message naming the setting and the port
 * (not a bare EADDRINUSE) and exit 1.
 */
export async function listenOrExit(listen, setting, port, anyFree = true) {
  try {
    return await listen();
  } catch (error) {
    if (error?.code !== "EADDRINUSE") throw error;
    process.stderr.write(`port ${port} is in use: set ${setting} to a free port${anyFree ? " (0: any free port)" : ""}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
