// Says why a tab stopped spending requests: hidden (polling slowed down or paused) or
// offline (nothing sent until the network is back). The poller itself watches the same
// signals (the package's hiddenIntervalMs and navigator.onLine); this only shows them.

/** Keeps `element` in step with the page's visibility and connectivity. */
export function showPace(element, { hiddenIntervalMs }) {
  const update = () => {
    const text = !navigator.onLine
      ? "offline: no requests until the network is back"
      : document.hidden
        ? hiddenText(hiddenIntervalMs)
        : "";
    element.textContent = text;
    element.hidden = text === "";
  };
  document.addEventListener("visibilitychange", update);
  addEventListener("online", update);
  addEventListener("offline", update);
  update();
}

function hiddenText(ms) {
  return ms === Infinity ? "tab hidden: polling paused" : `tab hidden: polling at most every ${Math.round(ms / 1000)} s`;
}
