// Shared by the server-render suites: what a render would have loaded, recorded from the moment
// the spy is installed (before the bindings are imported).

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
