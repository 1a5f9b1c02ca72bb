// Shared by the server-render suites: what a render would have loaded, recorded from the moment
// the spy is installed (before the bindings are imported), and when a render has settled.
import { trackPackageTimers } from "../support/timers.mjs";
import { timerChanges, until } from "../support/until.mjs";

// Installed on import, before the bindings are: their timers are seen too.
const timers = trackPackageTimers();

/**
 * Resolves once the render's work has settled: past the microtasks queued so far, with no
 * package timer pending and no file being read, nothing is left that could go on to a load (a
 * wasm load reads its file first). A condition, not a pause.
 */
export function settled() {
  return until(() => timers.pending().length === 0 && !process.getActiveResourcesInfo().some((r) => r.startsWith("FS")), {
    on: [timerChanges(timers)],
    everyMs: 5,
    settled: true,
    what: "the render's work to settle",
  });
}

/** Records every fetch and every wasm compilation or instantiation from now on. */
export function spyOnLoads() {
  const seen = [];
  // Replaced without reading Node's own fetch: its getter loads undici, which compiles wasm.
  Object.defineProperty(globalThis, "fetch", {
    configurable: true,
    writable: true,
    value: async (input) => {
      seen.push(`fetch ${input}`);
      throw new TypeError("no fetch during a server render");
    },
  });
  for (const name of ["Module", "Instance", "compile", "compileStreaming", "instantiate", "instantiateStreaming"]) {
    const original = WebAssembly[name];
    WebAssembly[name] = function spied(...args) {
      seen.push(`WebAssembly.${name}`);
      return new.target ? Reflect.construct(original, args, new.target) : original.apply(this, args);
    };
  }
  return seen;
}
