// Idempotent setup: installs only what is missing and prints one line per step.
// Used by `npm test`, `npm run build` and .ci/run, so a fresh machine needs no manual steps.
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { StepError, cli, isMain, probe, root, run } from "./exec.mjs";

const WASM_TARGET = "wasm32-unknown-unknown";
/**
 * The toolchain the shipped wasm is built with (and only that: tests, clippy and native builds
 * use stable). Pinned: `-Zbuild-std` and `-Cpanic=immediate-abort` are nightly-only, and a
 * nightly that changes them must not change the package silently. Why: docs/size.md.
 */
export const SHIPPED_TOOLCHAIN = "nightly-2026-10-29";
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMEDRIVER = "/usr/bin/chromedriver";

const line = (step, what) => console.log(`setup: ${step.padEnd(18)} ${what}`);

/** cargo-installed binaries must be reachable by every later child process. */
function addCargoBinToPath() {
  const bin = path.join(process.env.CARGO_HOME ?? path.join(homedir(), ".cargo"), "bin");
  const dirs = (process.env.PATH ?? "").split(path.delimiter);
  if (!dirs.includes(bin)) process.env.PATH = [bin, ...dirs].join(path.delimiter);
}

function checkNode() {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 20) throw new StepError("node", `Node ${process.versions.node} found, Node >= 20 is required`);
  line("node", `ok (${process.versions.node})`);
}

async function ensureWasmTarget() {
  if (probe("cargo", ["--version"]) === null) {
    throw new StepError("rust", "cargo not found: install Rust with rustup (https://rustup.rs) and retry");
  }
  const installed = probe("rustup", ["target", "list", "--installed"]);
  if (installed === null) throw new StepError("rust target", "rustup not found: install Rust with rustup");
  if (installed.split("\n").includes(WASM_TARGET)) return line("rust target", `ok (${WASM_TARGET})`);
  line("rust target", `installing ${WASM_TARGET}`);
  await run("rust target", "rustup", ["target", "add", WASM_TARGET]);
}

/** The pinned nightly with std's sources (rebuilt by -Zbuild-std) and the wasm target. */
async function ensureShippedToolchain() {
  const sysroot = probe("rustc", [`+${SHIPPED_TOOLCHAIN}`, "--print", "sysroot"])?.trim();
  const hasSrc = sysroot && existsSync(path.join(sysroot, "lib", "rustlib", "src", "rust", "library"));
  const hasTarget = sysroot && existsSync(path.join(sysroot, "lib", "rustlib", WASM_TARGET));
  if (hasSrc && hasTarget) return line("rust nightly", `ok (${SHIPPED_TOOLCHAIN}, rust-src, ${WASM_TARGET})`);
  line("rust nightly", `installing ${SHIPPED_TOOLCHAIN} (the shipped wasm's toolchain)`);
  await run("rust nightly", "rustup", [
    "toolchain", "install", SHIPPED_TOOLCHAIN, "--profile", "minimal",
    "--component", "rust-src", "--target", WASM_TARGET,
  ]);
}

/** .ci/run checks formatting and lints; a minimal rustup profile lacks both tools. */
async function ensureRustComponents() {
  const missing = [
    ["rustfmt", ["fmt", "--version"]],
    ["clippy", ["clippy", "--version"]],
  ].filter(([, args]) => probe("cargo", args) === null);
  if (missing.length === 0) return line("rust components", "ok (rustfmt, clippy)");
  const names = missing.map(([name]) => name);
  line("rust components", `installing ${names.join(", ")}`);
  await run("rust components", "rustup", ["component", "add", ...names]);
}

/** The wasm-bindgen CLI must match the crate's locked version exactly, or its output is rejected. */
export function lockedWasmBindgenVersion() {
  const lock = readFileSync(path.join(root, "Cargo.lock"), "utf8");
  const found = /\[\[package\]\]\r?\nname = "wasm-bindgen"\r?\nversion = "([^"]+)"/.exec(lock);
  if (!found) throw new StepError("wasm-bindgen-cli", "no wasm-bindgen entry in Cargo.lock");
  return found[1];
}

async function ensureWasmBindgen() {
  const want = lockedWasmBindgenVersion();
  const have = probe("wasm-bindgen", ["--version"])?.trim().split(" ")[1];
  const runner = probe("wasm-bindgen-test-runner", ["--version"]) !== null;
  if (have === want && runner) return line("wasm-bindgen-cli", `ok (${want})`);
  line("wasm-bindgen-cli", `installing ${want} (found ${have ?? "none"}; takes a few minutes)`);
  // No --locked: the CLI's own lock file does not build with current toolchains here.
  await run("wasm-bindgen-cli", "cargo", ["install", "wasm-bindgen-cli", "--version", want, "--force"]);
}

/** npm ci when node_modules is missing or older than the lock file (npm writes .package-lock.json). */
async function ensureNodeModules() {
  const marker = path.join(root, "node_modules", ".package-lock.json");
  const lock = path.join(root, "package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) {
    return line("npm dependencies", "ok");
  }
  line("npm dependencies", "installing (npm ci)");
  await run("npm dependencies", "npm", ["ci", "--no-audit", "--no-fund"]);
}

/** Browser wasm tests drive Debian's chromium through chromedriver. */
async function ensureChromium() {
  const missing = [CHROMIUM, CHROMEDRIVER].filter((p) => !existsSync(p));
  if (missing.length === 0) return line("chromium", "ok");
  if (process.getuid?.() !== 0) {
    throw new StepError(
      "chromium",
      `missing ${missing.join(", ")}; run as root or install them: ` +
        "sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium chromium-driver",
    );
  }
  line("chromium", `installing (missing ${missing.join(", ")})`);
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  await run("chromium", "apt-get", ["update"], { env });
  await run("chromium", "apt-get", ["install", "-y", "--no-install-recommends", "chromium", "chromium-driver"], { env });
}

/**
 * What `npm run build` needs: Rust's wasm target (stable, for the tests), the pinned nightly
 * (the shipped wasm), the matching wasm-bindgen CLI, npm packages.
 */
export async function setupBuildTools() {
  addCargoBinToPath();
  checkNode();
  await ensureWasmTarget();
  await ensureShippedToolchain();
  await ensureWasmBindgen();
  await ensureNodeModules();
}

/** Every setup step in order; fast (a few probes) when everything is present. */
export async function setup() {
  await setupBuildTools();
  await ensureRustComponents();
  await ensureChromium();
}

if (isMain(import.meta.url)) cli(setup);
