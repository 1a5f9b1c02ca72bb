// `captaindata-poller/react` rendered on a server (Node, renderToString): the idle snapshot, and
// neither a request nor a wasm load, whatever the options say.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createElement as h } from "react";
import { renderToString } from "react-dom/server";
import { settled, spyOnLoads } from "../bindings/ssr-spy.mjs";

const seen = spyOnLoads();
// Imported after the spies: the bindings' own imports may not load anything either.
const { useJobPoller } = await import("captaindata-poller/react");
const { App } = await import("../bindings/react-app/app.js");

test("the app renders the idle snapshot on the server, with no fetch and no wasm load", async () => {
  const html = renderToString(h(App, { jobUid: "0d2c4a8e-server-run" }));
  assert.match(html, /data-status="idle"/);
  assert.match(html, /<p id="count">0<\/p>/);
  await settled();
  assert.deepEqual(seen, []);
});

test("every field of the server snapshot is the idle one", async () => {
  let state;
  function Probe() {
    state = useJobPoller({ jobUid: "0d2c4a8e-server-run", baseUrl: "http://127.0.0.1:9/v3", onBatch() {} });
    return null;
  }
  renderToString(h(Probe));
  assert.deepEqual(
    { ...state, stop: typeof state.stop, resume: typeof state.resume },
    { status: "idle", rows: [], rowCount: 0, rowsBefore: 0, run: null, retrying: null, error: null, summary: null, role: null, cursor: null, stop: "function", resume: "function" },
  );
  state.stop(); // harmless on the server
  state.resume();
  renderToString(h(function Idle() {
    state = useJobPoller(null);
    return null;
  }));
  assert.equal(state.status, "idle");
  await settled();
  assert.deepEqual(seen, []);
});
