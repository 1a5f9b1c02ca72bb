// `npm run build`: cargo (release, wasm32, the pinned nightly) → wasm-bindgen of the locked version → wasm-opt -Oz
// from the npm package `binaryen` → validate → print the size. Idempotent; a failure names its step.
// Node built-ins only at the top: esbuild and terser are npm packages, loaded once setup has
// installed them (on a fresh clone `npm run build` installs them first).
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { StepError, cli, isMain, root, run } from "./exec.mjs";
import { SHIPPED_TOOLCHAIN, setupBuildTools } from "./setup.mjs";
import { writeRules } from "./rules.mjs";
import { listing } from "./size.mjs";

const CRATE = "captaindata_poller";
const OUT_DIR = "pkg";
const ENTRY_DIR = "dist";

// --target web: an ES module with `init`/`initSync`, usable by pages, bundlers, Node (initSync
// with the bytes) and workerd (initSync with a compiled module). Types are hand-written in
// index.d.ts, so wasm-bindgen's .d.ts is not generated.
// `--encode-into always`: strings are passed with `TextEncoder#encodeInto`, which every runtime
// the package supports has (no fallback copy in the glue: −40 bytes gzip).
const BINDGEN_FLAGS = ["--target", "web", "--no-typescript", "--encode-into", "always"];

// Debian's wasm-opt 108 breaks current wasm-bindgen output; the npm `binaryen` one does not.
// rustc's wasm32 output uses these post-MVP features; wasm-opt must accept them and may use them.
const WASM_OPT_FLAGS = [
  "-Oz",
  "--enable-bulk-memory",
  "--enable-nontrapping-float-to-int",
  "--enable-sign-ext",
  "--enable-mutable-globals",
  "--enable-bulk-memory-opt",
  "--enable-call-indirect-overlong",
  // Repeat passes until nothing shrinks, and drop sections no runtime reads.
  "--converge",
  "--strip-debug",
  "--strip-producers",
  "--strip-target-features",
];

const WASM_OPT_AGAIN = [
  ...WASM_OPT_FLAGS.filter((flag) => flag.startsWith("--enable-")),
  // Rust's wasm32 layout puts the stack first, growing down from 1 MiB to 0, and data above it:
  // the low 1 KiB is reached only by a stack that overflowed. Knowing that, binaryen folds
  // constant offsets into loads and stores (−0.2 KB gzip; docs/size.md).
  "--low-memory-unused",
  "--flatten",
  "--rereloop",
  "-Oz",
  "-Oz",
  // Constants that flow through calls and fields, found and folded (−35 bytes gzip).
  "--gufa-optimizing",
  "-Oz",
  "--converge",
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
  // No reference types or multi-value (on by default for this target): wasm-bindgen then keeps
  // JS values in its glue's table, not in an externref table with a shim per export and
  // import (−1.4 KB wasm, +0.3 KB glue, gzip).
  "-Ctarget-feature=-reference-types,-multivalue",
];

/**
 * The two modules: the whole one (Node, workerd, and a page's pollStep/scheduleWorkflow) and
 * the one a page loads to poll runs, without the feature `step-and-schedule` (docs/size.md).
 * wasm-bindgen names the files: `pkg/<name>_bg.wasm` and its glue `pkg/<name>.js`.
 */
export const MODULES = [
  { name: "captaindata_poller", cargo: [] },
  { name: "captaindata_poller_poll", cargo: ["--no-default-features"] },
];
const filesOf = ({ name }) => ({ wasm: `${OUT_DIR}/${name}_bg.wasm`, glue: `${OUT_DIR}/${name}.js` });

/** cargo build; returns the path of the .wasm cargo reports. */
async function cargoBuild(features) {
  const args = [
    `+${SHIPPED_TOOLCHAIN}`,
    "build",
    "--release",
    "--target",
    "wasm32-unknown-unknown",
    "--lib",
    ...NIGHTLY_ARGS,
    ...features,
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
 * Renames the module's imports and exports to one or two letters (binaryen's
 * `--minify-imports-and-exports-and-modules`), and the glue's references to them with the map it
 * prints. wasm-bindgen names each import `__wbg_<name>_<16-hex hash>` and each closure export
 * after its full Rust type (up to 250 characters): written twice, once in the wasm and once in
 * the glue, and hashes do not compress.
 */
async function minifyNames({ wasm: wasmFile, glue: glueFile }) {
  const wasmOpt = path.join(root, "node_modules", ".bin", "wasm-opt");
  const flags = WASM_OPT_FLAGS.filter((flag) => flag.startsWith("--enable-"));
  const out = await run("minify names", wasmOpt, [...flags, "--minify-imports-and-exports-and-modules", wasmFile, "-o", wasmFile], { capture: true });
  let map;
  try {
    map = JSON.parse(out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1));
  } catch (err) {
    throw new StepError("minify names", `wasm-opt printed no map of the new names: ${err.message}`);
  }
  // The module each import now comes from (binaryen's map names only the old one).
  const imports = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(path.join(root, wasmFile))));
  const moduleOf = new Map(imports.map((i) => [i.name, i.module]));
  const file = path.join(root, glueFile);
  writeFileSync(file, renamedGlue(readFileSync(file, "utf8"), map, moduleOf, glueFile));
}

/**
 * The glue with the new names, before it is minified: there every export is read as
 * `wasm.<name>` and every import is a key `<name>:` of the imports object. Fails when an import
 * is not found, or when the glue reads an export the map does not rename.
 */
function renamedGlue(glue, map, moduleOf, glueFile) {
  const replace = (pattern, to, name) => {
    const next = glue.replace(pattern, () => to); // a function: a new name may hold `$`
    if (next === glue && name) throw new StepError("minify names", `${glueFile} never names ${name}`);
    glue = next;
  };
  // Some exports are for other hosts (wasm-bindgen's own hooks): not every one is in the glue.
  for (const [from, to] of map.exports) replace(new RegExp(`\\bwasm\\.${from}\\b`, "g"), `wasm.${to}`);
  const modules = new Map();
  for (const [module, from, to] of map.imports) {
    replace(new RegExp(`(?<=^\\s*)${from}(?=:)`, "m"), to, `the import ${from}`);
    modules.set(module, moduleOf.get(to));
  }
  for (const [from, to] of modules) replace(`${JSON.stringify(from)}:`, `${JSON.stringify(to)}:`, `the module ${from}`);
  const exported = new Set(map.exports.map(([, to]) => to));
  const unknown = [...glue.matchAll(/\bwasm\.([\w$]+)/g)].map((m) => m[1]).filter((name) => !exported.has(name));
  if (unknown.length) throw new StepError("minify names", `${glueFile} reads exports the map does not rename: ${[...new Set(unknown)].join(", ")}`);
  return glue;
}

/**
 * Minified JS (whitespace, comments, local names, two compress passes), still an ES module with
 * the same exports. terser, not esbuild's minifier: 0.25 KB less gzip on the browser entry.
 * Two choices that cost a page 0.2 KB (docs/size.md): wasm-bindgen's `console.warn`s go (a
 * deprecated init call, which the entries never make, and a `.wasm` served without
 * `application/wasm`, which still loads), and function expressions that use neither `this`
 * nor `arguments` become arrows (none of ours or the glue's is called with `new`).
 */
async function minified(code) {
  const { minify: terser } = await import("terser");
  const compress = { passes: 2, pure_funcs: ["console.warn"], unsafe_arrows: true };
  return (await terser(code, { module: true, ecma: 2022, compress })).code;
}

/** Minifies wasm-bindgen's glue: every user downloads it. */
async function minifyGlue({ glue: glueFile }) {
  const file = path.join(root, glueFile);
  try {
    writeFileSync(file, await minified(readFileSync(file, "utf8")));
  } catch (err) {
    throw new StepError("minify glue", `terser could not minify ${glueFile}: ${err.message}`);
  }
}

/**
 * The shipped entry points: each file of js/ minified into dist/ under the same name, so the
 * relative imports (`./extras.js`, `../pkg/…`) resolve the same way from either folder. js/
 * stays the readable source (the demo and the worker tests load it as is). The browser entry is
 * one file, bundled with the modules it reaches and wasm-bindgen's glue: one request and one
 * compressed stream for a page (docs/size.md); so is the tab-sharing module it loads when a
 * second tab shares a run.
 */
async function minifyEntries() {
  rmSync(path.join(root, ENTRY_DIR), { recursive: true, force: true });
  mkdirSync(path.join(root, ENTRY_DIR));
  for (const name of readdirSync(path.join(root, "js")).filter((f) => f.endsWith(".js"))) {
    try {
      const code = BUNDLED.includes(name) ? await bundle(name) : await minify(name);
      writeFileSync(path.join(root, ENTRY_DIR, name), code);
    } catch (err) {
      throw new StepError("minify entries", `could not bundle or minify js/${name}: ${err.message}`);
    }
  }
}

const BROWSER_ENTRY = "browser.js";
const BUNDLED = [BROWSER_ENTRY, "tabs-shared.js"];

const minify = (name) => minified(readFileSync(path.join(root, "js", name), "utf8"));

/**
 * The glue's default module URL is relative to pkg/; in the bundle it would point into dist/,
 * where bundlers would look for the file and warn. It is made relative to dist/ (the browser
 * entry always passes its own URL, which names the same file).
 */
const glueUrlFromDist = {
  name: "glue-url-from-dist",
  setup(build) {
    build.onLoad({ filter: /[\\/]pkg[\\/]\w+\.js$/ }, ({ path: file }) => {
      const source = readFileSync(file, "utf8");
      const wasm = `${path.basename(file, ".js")}_bg.wasm`;
      const wasmUrl = new RegExp(`new URL\\((["'])${wasm}\\1,\\s*import\\.meta\\.url\\)`);
      if (!wasmUrl.test(source)) throw new Error(`${file} no longer names its .wasm with new URL(…, import.meta.url)`);
      return { contents: source.replace(wasmUrl, `new URL("../${OUT_DIR}/${wasm}",import.meta.url)`), loader: "js" };
    });
  },
};

// What a bundle imports dynamically stays a file of its own, loaded only when needed: the whole
// module's glue (a page's first pollStep or scheduleWorkflow), the tab-sharing module.
const dynamicApart = {
  name: "dynamic-imports-apart",
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, ({ path: spec, kind }) => (kind === "dynamic-import" ? { path: spec, external: true } : undefined));
  },
};

async function bundle(name) {
  const { build: esbuild } = await import("esbuild");
  const result = await esbuild({
    format: "esm",
    target: "es2022",
    entryPoints: [path.join(root, "js", name)],
    bundle: true,
    write: false,
    platform: "neutral",
    plugins: [dynamicApart, glueUrlFromDist],
  });
  return minified(result.outputFiles[0].text);
}

/** Fail here, not in a user's browser, if the optimised module is not valid WebAssembly. */
async function validate({ wasm: wasmFile, glue: glueFile }) {
  try {
    await WebAssembly.compile(readFileSync(path.join(root, wasmFile)));
  } catch (err) {
    throw new StepError("validate", `${wasmFile} does not compile: ${err.message}`);
  }
  // The glue gives every import the module asks for (a renamed one would fail to link here).
  const link = `import { readFileSync } from "node:fs"; const glue = await import("./${glueFile}"); glue.initSync({ module: readFileSync("${wasmFile}") });`;
  await run("validate", process.execPath, ["--input-type=module", "-e", link]);
}

/** One module: cargo → wasm-bindgen → wasm-opt → short names → minified glue → checked. */
async function buildModule(module) {
  const files = filesOf(module);
  const wasm = await cargoBuild(module.cargo);
  await run("wasm-bindgen", "wasm-bindgen", [...BINDGEN_FLAGS, "--out-dir", OUT_DIR, "--out-name", module.name, wasm]);
  const wasmOpt = path.join(root, "node_modules", ".bin", "wasm-opt");
  await run("wasm-opt", wasmOpt, [...WASM_OPT_FLAGS, files.wasm, "-o", files.wasm]);
  await minifyNames(files);
  // Once more (a second -Oz still shrinks it; flatten + rereloop restructure the control
  // flow first): −0.4 KB gzip, docs/size.md.
  await run("wasm-opt again", wasmOpt, [...WASM_OPT_AGAIN, files.wasm, "-o", files.wasm]);
  await minifyGlue(files);
  await run("check glue", process.execPath, ["--check", files.glue]);
  await validate(files);
}

/**
 * The whole module's bytes as a JS module (`export default "<base64>"`), for the Node entry: a
 * server bundler (Vite's SSR build, Next.js) carries a module it imports, where a file read
 * next to the entry stays behind (docs/size.md: the package's cost).
 */
export const INLINED_WASM = `${OUT_DIR}/captaindata_poller_bg_wasm.js`;

function inlineWasm() {
  const bytes = readFileSync(path.join(root, filesOf(MODULES[0]).wasm));
  writeFileSync(path.join(root, INLINED_WASM), `export default ${JSON.stringify(bytes.toString("base64"))};\n`);
}

export async function build() {
  await setupBuildTools();
  // js/rules.js from the crate first: the entries below bundle it.
  await writeRules();
  // Start from an empty pkg/ so files from earlier flags never linger in the package.
  rmSync(path.join(root, OUT_DIR), { recursive: true, force: true });
  for (const module of MODULES) await buildModule(module);
  inlineWasm();
  await minifyEntries();
  const files = [...MODULES.flatMap((m) => Object.values(filesOf(m))), `${ENTRY_DIR}/${BROWSER_ENTRY}`];
  console.log(`built (what a page downloads is measured by \`npm test\`'s size check):\n${listing(files)}`);
}

if (isMain(import.meta.url)) cli(build);
