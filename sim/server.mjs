// Node adapter: serves the simulator's Fetch-API handler over HTTP on loopback only.
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { createSim } from "./index.js";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? Buffer.concat(chunks) : undefined;
}

function toRequest(req, body, signal, fallbackHost) {
  // The client's Host header gives the origin of `paging.next`, as a real server behind it would.
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? fallbackHost}`);
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
 * Starts the simulator on 127.0.0.1.
 * @param {{ port?: number, host?: string, sim?: ReturnType<typeof createSim> } & import("./index.js").SimOptions} [options]
 * @returns {Promise<{ url: string, origin: string, port: number, sim: ReturnType<typeof createSim>, close(): Promise<void> }>}
 */
export async function startSimServer({ port = 0, host = "127.0.0.1", sim, ...simOptions } = {}) {
  if (!LOOPBACK.has(host)) throw new TypeError(`The simulator binds loopback only (got host ${host})`);
  const theSim = sim ?? createSim(simOptions);
  let fallbackHost = host;
  const server = createServer((req, res) => {
    serve(theSim, req, res, fallbackHost).catch(() => req.socket.destroy());
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const actualPort = server.address().port;
  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${actualPort}`;
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

async function main() {
  const port = Number(process.env.PORT ?? 8790);
  const server = await startSimServer({ port });
  const { jobUid } = server.sim.createJob({ rows: 2000, durationMs: 60000 });
  console.log(`simulator: ${server.url}  (Authorization: x-api-key sim-key, x-project-id: sim-project)`);
  console.log(`demo job: ${jobUid}  (GET ${server.url}/jobs/${jobUid}/results)`);
  console.log(
    `control: POST ${server.origin}/__sim/jobs, GET ${server.origin}/__sim/stats, POST ${server.origin}/__sim/reset`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
