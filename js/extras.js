// What is simpler in JS than in Rust: the async iterator over a poller's batches, and `role`
// where tabs cannot share a poller. Shared by every entry point (browser, node, workerd).

/**
 * Adds `poller.role`, always `"alone"`: runtimes without tabs (Node, workerd) never share a
 * poller, so `shareAcrossTabs` has nothing to do there (js/tabs.js does it in browsers).
 */
export function alone(JobPoller) {
  Object.defineProperty(JobPoller.prototype, "role", { get: () => "alone", configurable: true });
  return JobPoller;
}

/**
 * Adds `poller[Symbol.asyncIterator]()`: the same batches as `onBatch`. The poller waits for
 * the consumer (it hands over one batch and continues when the next one is asked for), the
 * iterator ends on completion, throws the error on failure, and `break` stops the poller.
 */
export function withIterator(JobPoller) {
  JobPoller.prototype[Symbol.asyncIterator] = function iterate() {
    const poller = this;
    let handed = null; // { batch, release }: given by the poller, not yet taken
    let release = null; // lets the poller go on once the consumer asks for more
    let waiting = null; // { resolve, reject } of a next() waiting for a batch
    let ended = null; // { error } or {} once the poller ended
    const flush = () => {
      if (!waiting) return;
      const { resolve, reject } = waiting;
      if (handed) {
        ({ release } = handed);
        resolve({ value: handed.batch, done: false });
        handed = waiting = null;
      } else if (ended) {
        waiting = null;
        if (ended.error) reject(ended.error);
        else resolve({ value: undefined, done: true });
      }
    };
    const letGo = () => {
      if (release) release();
      release = null;
    };
    poller._setBatchSink((batch) => new Promise((resolve) => {
      handed = { batch, release: resolve };
      flush();
    }));
    poller.start().then(
      () => { ended = {}; flush(); },
      (error) => { ended = { error }; flush(); },
    );
    return {
      next() {
        letGo();
        return new Promise((resolve, reject) => {
          waiting = { resolve, reject };
          flush();
        });
      },
      return() {
        letGo();
        ended ??= {};
        poller.stop();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  };
  return JobPoller;
}
