// `npm start`: build pkg/ if it is missing or older than the sources (setting up what the build
// needs first), then the demo server (scripts/demo-server.mjs): the demo page, the package files
// and the simulator on one origin. Nothing imported here needs an npm package: on a fresh clone
// none is installed yet (build.mjs loads esbuild and terser after its setup).
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { DEFAULT_PORT, startDemoServer } from "./demo-server.mjs";
import { cli, isMain, root } from "./exec.mjs";
import { build } from "./build.mjs";

// Where the browser tests found it; the server lives in scripts/demo-server.mjs.
export { startDemoServer };

const SOURCES = ["src", "Cargo.toml", "Cargo.lock"];
const BUILT = ["pkg/captaindata_poller.js", "pkg/captaindata_poller_bg.wasm", "pkg/captaindata_poller_poll.js", "pkg/captaindata_poller_poll_bg.wasm"];

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

async function main() {
  if (pkgIsStale()) {
    console.log("pkg/ is missing or older than src/: building it (npm run build)");
    await build(); // sets up what it needs first (Rust, wasm-bindgen, npm packages)
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
