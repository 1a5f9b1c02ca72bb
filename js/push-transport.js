// Which way a JobPoller gets its rows: polling (the wasm poller), or pushed by the worker's
// stream (js/push.js, loaded only when a stream is used). "auto" polls and listens: the
// worker's reads carry `x-poller-stream`, which Captain Data never sends, so the first answer
// from a worker switches the poller to its stream; nothing more is asked of anyone to learn it.

const MODES = ["poll", "push", "auto"];

/**
 * Checks `transport` and `WebSocket`; returns the options the wasm poller is built with and
 * `run(...)`, which polls, pushes, or polls then pushes (see js/push.js).
 */
export function transportOf(options, delivery, whole) {
  const { transport: mode = "auto", WebSocket: given } = options;
  if (!MODES.includes(mode)) throw new TypeError('Expected `transport` to be "poll", "push" or "auto"');
  if (given !== undefined && typeof given !== "function") throw new TypeError("Expected `WebSocket` to be a WebSocket constructor");
  const Socket = given ?? globalThis.WebSocket;
  // Without a WebSocket (Node 20 without a flag), "auto" polls.
  if (mode === "push" && !Socket) throw new TypeError("Expected `WebSocket` to be given: this runtime has no WebSocket");
  if (mode === "poll" || (mode === "auto" && !Socket)) return { options, run: ({ inner }) => inner.start() };
  let inner = null;
  let heard = mode === "push";
  const fetched = (url, init) =>
    (options.fetch ? options.fetch(url, init) : fetch(url, init)).then((response) => {
      if (!heard && response.headers.get("x-poller-stream") === "v1") {
        heard = true;
        inner?.stop(); // quietly, after the batch in hand: the stream goes on from its cursor
      }
      return response;
    });
  return {
    // Under push each tab has its own socket (js/push.js says why): no tab sharing.
    options: mode === "push" ? { ...options, shareAcrossTabs: false } : { ...options, fetch: fetched },
    async run(context) {
      inner = context.inner;
      const polled = mode === "push" ? null : await inner.start();
      if (polled && (!heard || polled.status !== "stopped" || context.stopped())) return polled;
      const { pushRows } = await import("./push.js");
      return pushRows({ ...context, options, delivery, whole, Socket, polled, fallback: mode === "auto" });
    },
  };
}
