// Which way a JobPoller gets its rows: polling (the wasm poller), or pushed by the worker's
// stream (js/push.js, loaded only when a stream is used: a page that polls Captain Data
// downloads nothing more). "auto" polls and listens: the worker's reads carry
// `x-poller-stream`, which Captain Data never sends, so the first answer from a worker
// switches the poller to its stream; nothing more is asked of anyone to learn it. The options
// of a stream are checked by js/push.js (a `transport` other than "poll" and "auto" goes
// there and is refused unless it is "push"): this file is in every page's download.

/**
 * Null to poll only; else the options the wasm poller is built with, and
 * `run(first, swap)`, which polls, pushes, or polls then pushes (`swap(next)` hands the
 * poller to `next` and says whether it was stopped).
 */
export function transportOf(options, delivery, whole) {
  const { transport: mode = "auto" } = options;
  const auto = mode === "auto";
  let inner;
  let heard;
  // Without a WebSocket (Node 20 without a flag), "auto" polls.
  if (mode === "poll" || (auto && !(options.WebSocket || globalThis.WebSocket))) return null;
  // Quietly, after the batch in hand: the stream goes on from the cursor.
  const fetched = (url, init) =>
    (options.fetch || fetch)(url, init).then((response) => (!heard && response.headers.get("x-poller-stream") && ((heard = true), inner.stop()), response));
  return {
    // Under push each tab has its own socket (js/push.js says why): its tab poller never starts.
    options: auto ? { ...options, fetch: fetched } : options,
    async run(first, swap) {
      const polled = auto ? await (inner = first).start() : null;
      if ((auto && !heard) || swap(first)) return polled;
      return (await import("./push.js")).default(options, delivery, whole, first, swap, polled);
    },
  };
}
