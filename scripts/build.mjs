// `npm run build`: cargo (release, wasm32, the pinned nightly) → wasm-bindgen of the locked version → wasm-opt -Oz
// from the npm package `binaryen` → validate → print the size. Idempotent; a failure names its step.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { transform } from "esbuild";
import path from "node:path";
import { StepError, cli, isMain, root, run } from "./exec.mjs";
import { SHIPPED_TOOLCHAIN, setupBuildTools } from "./setup.mjs";
import { GLUE, WASM, measure, summary } from "./size.mjs";

const CRATE = "captaindata_poller";
const OUT_DIR = "pkg";
const ENTRY_DIR = "dist";

// --target web: an ES module with `init`/`initSync`, usable by pages, bundlers, Node (initSync
// with the bytes) and workerd (initSync with a compiled module). Types are hand-written in
// index.d.ts, so wasm-bindgen's .d.ts is not generated.
const BINDGEN_FLAGS = ["--target", "web", "--no-typescript"];

// Debian's wasm-opt 108 breaks current wasm-bindgen output; the npm `binaryen` one does not.
// rustc's wasm32 output uses these post-MVP features; wasm-opt must accept them and may use them.
const WASM_OPT_FLAGS = [
  "-Oz",
  "--enable-bulk-memory",
  "--enable-nontrapping-float-to-int",
  "--enable-sign-ext",
  "--enable-mutable-globals",
  "--enable-reference-types",
  "--enable-multivalue",
  "--enable-bulk-memory-opt",
  "--enable-call-indirect-overlong",
  // Repeat passes until nothing shrinks, and drop sections no runtime reads.
  "--converge",
  "--strip-debug",
  "--strip-producers",
  "--strip-target-features",
];

/**
 * The shipped wasm only (docs/size.md, "The toolchain"): std rebuilt with the crate's profile,
 * and panics that abort at once (no panic message or location is formatted, so `core::fmt`'s
 * panic paths are not linked). Tests, clippy and native builds stay on stable.
 */
const NIGHTLY_ARGS = [
  "-Zbuild-std=std,panic_abort",
  // std's own switch for smaller code over speed (its sorts, searches, formatting).
  "-Zbuild-std-features=optimize_for_size",
];
const NIGHTLY_RUSTFLAGS = [
  "-Zunstable-options",
  "-Cpanic=immediate-abort",
  // No file/line/column strings for the panics and `#[track_caller]` sites that remain.
  "-Zlocation-detail=none",
  // `{:?}` prints nothing: the derives stay (tests and native use them), their code goes.
  "-Zfmt-debug=none",
];

/** cargo build; returns the path of the .wasm cargo reports. */
async function cargoBuild() {
  const args = [
    `+${SHIPPED_TOOLCHAIN}`,
    "build",
    "--release",
    "--target",
    "wasm32-unknown-unknown",
    "--lib",
    ...NIGHTLY_ARGS,
    "--message-format=json-render-diagnostics",
  ];
  // Its own target dir: stable's test builds and this one would otherwise evict each other.
  const targetDir = path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "target"), "shipped");
  const env = { RUSTFLAGS: NIGHTLY_RUSTFLAGS.join(" "), CARGO_TARGET_DIR: targetDir };
  const out = await run("cargo build", "cargo", args, { capture: true, env });
  const wasm = out
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))
    .filter((msg) => msg.reason === "compiler-artifact" && msg.target?.name === CRATE)
    .flatMap((msg) => msg.filenames)
    .find((file) => file.endsWith(".wasm"));
  if (!wasm) throw new StepError("cargo build", `cargo reported no ${CRATE}.wasm artifact`);
  return wasm;
}

/**
 * Minifies wasm-bindgen's glue with esbuild (whitespace, comments, local names): every user
 * downloads it. It stays an ES module with the same exports.
 */
async function minifyGlue() {
  const file = path.join(root, GLUE);
  try {
    const { code } = await transform(readFileSync(file, "utf8"), { minify: true, format: "esm", target: "es2020" });
    writeFileSync(file, code);
  } catch (err) {
    throw new StepError("minify glue", `esbuild could not minify ${GLUE}: ${err.message}`);
  }
}

/**
 * The shipped entry points: each file of js/ minified into dist/ under the same name, so the
 * relative imports (`./extras.js`, `../pkg/…`) resolve the same way from either folder. js/
 * stays the readable source (the demo and the worker tests load it as is).
 */
async function minifyEntries() {
  rmSync(path.join(root, ENTRY_DIR), { recursive: true, force: true });
  mkdirSync(path.join(root, ENTRY_DIR));
  for (const name of readdirSync(path.join(root, "js")).filter((f) => f.endsWith(".js"))) {
    const source = readFileSync(path.join(root, "js", name), "utf8");
    try {
      const { code } = await transform(source, { minify: true, format: "esm", target: "es2022" });
      writeFileSync(path.join(root, ENTRY_DIR, name), code);
    } catch (err) {
      throw new StepError("minify entries", `esbuild could not minify js/${name}: ${err.message}`);
    }
  }
}

/** Fail here, not in a user's browser, if the optimised module is not valid WebAssembly. */
async function validate() {
  try {
    await WebAssembly.compile(readFileSync(path.join(root, WASM)));
  } catch (err) {
    throw new StepError("validate", `${WASM} does not compile: ${err.message}`);
  }
}

export async function build() {
  await setupBuildTools();
  const wasm = await cargoBuild();
  // Start from an empty pkg/ so files from earlier flags never linger in the package.
  rmSync(path.join(root, OUT_DIR), { recursive: true, force: true });
  await run("wasm-bindgen", "wasm-bindgen", [...BINDGEN_FLAGS, "--out-dir", OUT_DIR, wasm]);
  await minifyGlue();
  await run("check glue", process.execPath, ["--check", GLUE]);
  const wasmOpt = path.join(root, "node_modules", ".bin", "wasm-opt");
  await run("wasm-opt", wasmOpt, [...WASM_OPT_FLAGS, WASM, "-o", WASM]);
  await validate();
  await minifyEntries();
  console.log(`built ${WASM} and ${GLUE}`);
  console.log(summary(measure()));
}

if (isMain(import.meta.url)) cli(build);
