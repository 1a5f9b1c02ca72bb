// `npm start`: build pkg/ if it is missing or older than the sources, then ONE server on
// 127.0.0.1 that serves the demo page (www/), the package files (/pkg/, /js/) and the simulator
// (/v3, /__sim) from the same origin: no CORS, and no key ever leaves the machine.
import { createReadStream, existsSync, readdirSync, statSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { createSim } from "../sim/index.js";
import { serve as serveSim } from "../sim/server.mjs";
import { build } from "./build.mjs";
import { cli, isMain, root } from "./exec.mjs";

const DEFAULT_PORT = 8080;
const HOST = "127.0.0.1";
const SOURCES = ["src", "Cargo.toml", "Cargo.lock"];
const BUILT = ["pkg/captaindata_poller.js", "pkg/captaindata_poller_bg.wasm", "pkg/captaindata_poller_poll.js", "pkg/captaindata_poller_poll_bg.wasm"];

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

/** Newest modification time under `rel` (a file or a directory), 0 when absent. */
function newestMtime(rel) {
  const abs = path.join(root, rel);
  if (!existsSync(abs)) return 0;
  const stat = statSync(abs);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(abs).map((name) => newestMtime(path.join(rel, name))));
}

/** True when pkg/ is missing or older than the Rust sources it is built from. */
export function pkgIsStale() {
  if (BUILT.some((file) => !existsSync(path.join(root, file)))) return true;
  const built = Math.min(...BUILT.map((file) => statSync(path.join(root, file)).mtimeMs));
  return Math.max(...SOURCES.map(newestMtime)) > built;
}

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

async function main() {
  if (pkgIsStale()) {
    console.log("pkg/ is missing or older than src/: building it (npm run build)");
    await build();
  } else {
    console.log("pkg/ is up to date");
  }
  const port = process.env.PORT ? Number(process.env.PORT) : DEFAULT_PORT;
  const demo = await startDemoServer({ port });
  console.log(`\ncaptaindata-poller demo: ${demo.url}`);
  console.log("  offline: the simulated Captain Data API is served at /v3 on the same origin");
  console.log("  Ctrl-C stops the server");
  const stop = () => demo.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (isMain(import.meta.url)) cli(main);
