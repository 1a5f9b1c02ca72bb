// `captaindata-poller/vue` rendered on a server (Node, @vue/server-renderer): the idle state,
// and neither a request nor a wasm load (the poller starts on mount, which a server never does).
import assert from "node:assert/strict";
import { test } from "node:test";
import { createSSRApp, defineComponent, h } from "vue";
import { renderToString } from "vue/server-renderer";
import { settled, spyOnLoads } from "../bindings/ssr-spy.mjs";

const seen = spyOnLoads();
const { useJobPoller } = await import("captaindata-poller/vue"); // after the spies

test("a component using the composable renders idle on the server, with no fetch and no wasm load", async () => {
  const Run = defineComponent(() => {
    const { status, rowCount } = useJobPoller({ jobUid: "0d2c4a8e-server-run", baseUrl: "http://127.0.0.1:9/v3", onBatch() {} });
    return () => h("p", { "data-status": status.value }, `${rowCount.value} rows`);
  });
  const html = await renderToString(createSSRApp(Run));
  assert.equal(html, '<p data-status="idle">0 rows</p>');
  await settled(); // past the store's microtasks, nothing pending that could load
  assert.deepEqual(seen, []);
});
