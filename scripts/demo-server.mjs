// The demo server: ONE server on 127.0.0.1 that serves the demo page (www/), the package files
// (/pkg/, /js/) and the simulator (/v3, /__sim) from the same origin: no CORS, and no key ever
// leaves the machine. `npm start` runs it (scripts/start.mjs); the size check and the browser
// tests start their own. Node built-ins and the simulator only: it runs before anything is
// installed.
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { createSim } from "../sim/index.js";
import { serve as serveSim } from "../sim/server.mjs";
import { root } from "./exec.mjs";

export const DEFAULT_PORT = 8080;
const HOST = "127.0.0.1";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm", // instantiateStreaming refuses any other type
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/** Maps a URL path to a file under one of the served folders; null outside them. */
function staticFile(pathname, wwwDir) {
  const mounts = [
    ["/pkg/", path.join(root, "pkg")],
    ["/js/", path.join(root, "js")],
    ["/", wwwDir],
  ];
  const [prefix, dir] = mounts.find(([p]) => pathname.startsWith(p));
  let rel;
  try {
    rel = decodeURIComponent(pathname.slice(prefix.length));
  } catch {
    return null;
  }
  const file = path.resolve(dir, rel === "" || rel.endsWith("/") ? `${rel}index.html` : rel);
  // path.resolve folds any "..": a result outside the mount is a traversal attempt.
  if (file !== dir && !file.startsWith(dir + path.sep)) return null;
  return existsSync(file) && statSync(file).isFile() ? file : null;
}

function serveStatic(req, res, wwwDir) {
  const { pathname } = new URL(req.url ?? "/", "http://localhost");
  const file = req.method === "GET" || req.method === "HEAD" ? staticFile(pathname, wwwDir) : null;
  if (!file) {
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    res.end("Not found");
    return;
  }
  // no-store: after `npm run build` or an edit, a reload shows the new files.
  res.writeHead(200, {
    "content-type": MIME[path.extname(file)] ?? "application/octet-stream",
    "cache-control": "no-store",
  });
  if (req.method === "HEAD") res.end();
  else createReadStream(file).pipe(res);
}

const isSimPath = (url) => url.startsWith("/v3/") || url === "/v3" || url.startsWith("/__sim/");

function listen(server, port) {
  return new Promise((resolve, reject) => {
    const onError = (err) => reject(err);
    server.once("error", onError);
    server.listen(port, HOST, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

/**
 * Starts the demo server on 127.0.0.1.
 * @param {{ port?: number, sim?: ReturnType<typeof createSim>, wwwDir?: string, fallback?: boolean }} [options]
 *   `port` 0 picks a free port; with `fallback` (the default) a busy port falls back to a free one.
 *   `wwwDir` serves another folder at / (the Vite test serves its build this way).
 * @returns {Promise<{ url: string, port: number, sim: ReturnType<typeof createSim>, close(): Promise<void> }>}
 */
export async function startDemoServer({ port = DEFAULT_PORT, sim = createSim(), wwwDir = path.join(root, "www"), fallback = true } = {}) {
  const dir = path.resolve(wwwDir);
  let host = `${HOST}:${port}`;
  const server = createServer((req, res) => {
    if (isSimPath(req.url ?? "")) serveSim(sim, req, res, host).catch(() => req.socket.destroy());
    else serveStatic(req, res, dir);
  });
  try {
    await listen(server, port);
  } catch (err) {
    if (!(fallback && err.code === "EADDRINUSE")) throw err;
    console.log(`port ${port} is busy; using a free port instead`);
    await listen(server, 0);
  }
  const actual = server.address().port;
  host = `${HOST}:${actual}`;
  return {
    url: `http://${host}/`,
    port: actual,
    sim,
    close() {
      sim.dispose();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
