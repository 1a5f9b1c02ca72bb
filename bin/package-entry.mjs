// The package itself, through its own name (package.json `exports`, the `node` condition):
// the CLI runs on exactly what `import "captaindata-poller"` gives a Node program. Loaded on
// first use, so `--help` and usage errors do not instantiate the wasm.

let loaded = null;

/** `{ JobPoller, scheduleWorkflow }` of the package's Node entry. */
export function loadPackage() {
  loaded ??= import("captaindata-poller").catch((error) => {
    // In a clone of the repository the entry exists only after `npm run build`.
    throw new Error(`cannot load the captaindata-poller package (${error.code ?? error.message}); in a clone of the repository, run npm run build first`, { cause: error });
  });
  return loaded;
}

/** Settles a promise into `{ value }` or `{ error }`. */
export const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error }));
