// The demo page polls a tracked run through the worker, end to end in Chromium: `npm run
// worker:dev` (the worker in Miniflare, the simulator as Captain Data) and the demo server
// (`npm start`), the page set to the worker with the run's read token and no API key.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { LOCAL_SECRETS } from "../../worker/miniflare-options.mjs";
import { rowIds, shownRowIds, waitForState, watchConsole } from "./browser-fixture.mjs";
import { startDemoWithWorker } from "./worker-dev.mjs";

const ROWS = 2500; // three of the worker's 1000-row pages

/** The demo server, Chromium, worker:dev and the simulator: `{ demo, browser, workerOrigin, simOrigin, stop }`. */
let stack;
before(async () => {
  stack = await startDemoWithWorker();
});
after(() => stack?.stop());

/** A run on worker:dev's simulator, tracked by the worker: its uid and read token. */
async function trackedRun(spec) {
  const created = await fetch(`${stack.simOrigin}/__sim/jobs`, { method: "POST", body: JSON.stringify(spec) });
  assert.equal(created.status, 201);
  const { jobUid } = await created.json();
  const tracked = await fetch(`${stack.workerOrigin}/v3/jobs/${jobUid}/track`, {
    method: "POST",
    headers: { authorization: `Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}` },
  });
  assert.equal(tracked.status, 201);
  return { jobUid, token: (await tracked.json()).read_token };
}

test("the demo polls a tracked run through the worker with its read token and gets every row", { timeout: 60000 }, async () => {
  const { jobUid, token } = await trackedRun({ rows: ROWS, durationMs: 3000 });
  const context = await stack.browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  const problems = watchConsole(page);
  const requests = [];
  page.on("request", (r) => requests.push({ url: r.url(), headers: r.headers() }));
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  await page.goto(stack.demo.url);
  await page.waitForSelector("body[data-ready=true]");

  await page.locator("#settings summary").click();
  const settings = page.locator("#settings-form");
  await settings.getByLabel("A real API or a proxy").check();
  await settings.getByLabel("Base URL").fill(`${stack.workerOrigin}/v3`);
  await settings.getByLabel("Read token (worker)").fill(token);
  await settings.getByRole("button", { name: "Save settings" }).click();
  const poll = page.locator("#poll-form");
  await poll.getByLabel("jobUid").fill(jobUid);
  await poll.getByLabel("Poll every (ms)").fill("200");
  await poll.getByRole("button", { name: "Poll this run" }).click();

  await waitForState(page, "completed", 30000);
  assert.deepEqual(await shownRowIds(page), rowIds(ROWS), "every row once, in order");
  assert.match(await page.locator("#run-status").textContent(), new RegExp(`finished — ${ROWS.toLocaleString("en")} rows`));
  const api = requests.filter((r) => r.url.startsWith(`${stack.workerOrigin}/v3/`));
  // The poller reads the run once, then the worker's stream pushes the rows (transport "auto").
  assert.ok(api.some((r) => r.url.includes("page=")) || sockets.some((u) => u.includes(`/v3/jobs/${jobUid}/stream`)), "the worker's later pages were read, or its stream");
  assert.ok(sockets.every((u) => !u.includes(token)), "the token is in no socket URL");
  assert.ok(api.filter((r) => r.headers["x-read-token"]).length > 0, "the token went in a header");
  assert.ok(requests.every((r) => !r.url.startsWith(stack.simOrigin)), "the page never reached the simulator itself");
  assert.ok(requests.every((r) => !r.url.includes(token)), "the token is in no URL");
  assert.ok(api.every((r) => !("authorization" in r.headers)), "no API key was sent");
  const stored = await page.evaluate(() => ({ local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }) }));
  assert.ok(!stored.local.includes(token), "the token is not in localStorage");
  assert.ok(stored.session.includes(token), "the token is kept for this tab");
  assert.ok(!(await page.locator("body").innerText()).includes(token), "the token is not shown");
  assert.deepEqual(problems, []);
  await context.close();
});

test("without the read token the worker refuses the run: the page says UNAUTHORIZED", { timeout: 60000 }, async () => {
  const { jobUid } = await trackedRun({ rows: 10, durationMs: 0 });
  const context = await stack.browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  await page.goto(stack.demo.url);
  await page.waitForSelector("body[data-ready=true]");
  await page.locator("#settings summary").click();
  const settings = page.locator("#settings-form");
  await settings.getByLabel("A real API or a proxy").check();
  await settings.getByLabel("Base URL").fill(`${stack.workerOrigin}/v3`);
  await settings.getByRole("button", { name: "Save settings" }).click();
  const poll = page.locator("#poll-form");
  await poll.getByLabel("jobUid").fill(jobUid);
  await poll.getByLabel("Poll every (ms)").fill("200");
  await poll.getByRole("button", { name: "Poll this run" }).click();
  await waitForState(page, "failed");
  assert.equal(await page.locator("#error-title").textContent(), "UNAUTHORIZED");
  await context.close();
});
