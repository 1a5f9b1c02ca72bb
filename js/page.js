// The page around a wasm poller: is it hidden (`document.hidden`), is the runtime online
// (`navigator.onLine`)? Told to the poller as they change (`_hidden`, `_online`); the engine
// decides what they change. Where there is no `document` (Web Workers, Node, workerd) or no
// boolean `navigator.onLine` (Node, workerd), nothing is watched. (Watched here, not in the
// wasm: the listeners' glue cost a page more there, docs/size.md.)

/**
 * Tells `poller` the page's state now, then each change, until the returned function is
 * called; the visibility only with `visibility` (a poller shared by tabs is told it by the
 * tab layer: hidden only when every sharing tab is).
 */
export function watchPage(poller, { visibility = true } = {}) {
  const unlisten = [];
  const listen = (target, type, handler) => {
    target.addEventListener(type, handler);
    unlisten.push(() => target.removeEventListener(type, handler));
  };
  const page = globalThis.document;
  if (visibility && typeof page?.addEventListener === "function") {
    if (page.hidden) poller._hidden(true);
    listen(page, "visibilitychange", () => poller._hidden(Boolean(page.hidden)));
  }
  if (typeof globalThis.navigator?.onLine === "boolean" && typeof globalThis.addEventListener === "function") {
    if (!globalThis.navigator.onLine) poller._online(false);
    listen(globalThis, "online", () => poller._online(true));
    listen(globalThis, "offline", () => poller._online(false));
  }
  return () => {
    for (const stop of unlisten.splice(0)) stop();
  };
}
