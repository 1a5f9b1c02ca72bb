// `npm run worker:dev`: the worker in Miniflare on 127.0.0.1, with the simulator as Captain
// Data (webhooks included), a demo run tracked, and the commands to try printed. The simulator's
// port also answers `POST /__dev/runs` (worker/dev-runs.mjs): runs for the demo's viewers page.
// Settings (environment): WORKER_PORT, SIM_PORT, ALLOWED_ORIGINS (the demo pages' origins),
// POLL_INTERVAL_MS (the worker's cadence per run; 0: steps on the cron tick and webhooks only)
// and CRON_EVERY_MS (the Cron Trigger's tick; 0: none). With both at 0 the worker reads a run
// only when it is tracked and when Captain Data's webhook says it ended, whatever else happens.
import { Miniflare } from "miniflare";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { createSim } from "../sim/index.js";
import { serve } from "../sim/server.mjs";
import { devRuns } from "./dev-runs.mjs";
import { LOCAL_SECRETS, REPO_ROOT, miniflareOptions } from "./miniflare-options.mjs";

const WORKER_PORT = Number(process.env.WORKER_PORT ?? 8787);
const SIM_PORT = Number(process.env.SIM_PORT ?? 8790);
// The demo page (npm start) serves on 127.0.0.1:8080 by default; other origins via ALLOWED_ORIGINS.
const ORIGINS = process.env.ALLOWED_ORIGINS ?? "http://127.0.0.1:8080,http://localhost:8080";
const ORIGIN_LIST = ORIGINS.split(",").map((o) => o.trim());
const POLL_INTERVAL_MS = process.env.POLL_INTERVAL_MS ?? "5000";
// Miniflare does not fire crons by itself: tick like the trigger would (every minute).
const CRON_EVERY_MS = Number(process.env.CRON_EVERY_MS ?? 60000);

/**
 * The simulator on 127.0.0.1:`port` with the viewers page's `/__dev/runs` beside it
 * (sim/server.mjs's `serve` answers the rest, as on the demo server).
 */
async function startSim(port, workerOrigin) {
  const sim = createSim({
    apiKey: LOCAL_SECRETS.CAPTAINDATA_API_KEY,
    projectId: LOCAL_SECRETS.CAPTAINDATA_PROJECT_ID,
    webhook: { url: `${workerOrigin}/webhooks/captaindata`, headers: { "x-webhook-secret": LOCAL_SECRETS.WEBHOOK_SECRET } },
  });
  const origin = `http://127.0.0.1:${port}`;
  const runs = devRuns({ sim, workerOrigin, simOrigin: origin, allowedOrigins: ORIGIN_LIST });
  const server = createServer((req, res) => {
    if (!runs(req, res)) serve(sim, req, res, `127.0.0.1:${port}`).catch(() => req.socket.destroy());
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    sim,
    origin,
    url: `${origin}/v3`,
    close() {
      sim.dispose();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function main() {
  // The worker imports the package by name: its workerd entry (dist/) and wasm (pkg/).
  if (!existsSync(path.join(REPO_ROOT, "pkg", "captaindata_poller_bg.wasm")) || !existsSync(path.join(REPO_ROOT, "dist", "workerd.js"))) {
    throw new Error("pkg/ and dist/ are not built: run `npm run build` first");
  }
  const workerOrigin = `http://127.0.0.1:${WORKER_PORT}`;
  const sim = await startSim(SIM_PORT, workerOrigin);
  const mf = new Miniflare(
    await miniflareOptions({ baseUrl: sim.url, port: WORKER_PORT, bindings: { ALLOWED_ORIGINS: ORIGINS, POLL_INTERVAL_MS } }),
  );
  await mf.ready;
  const { jobUid } = sim.sim.createJob({ rows: 500, durationMs: 60000 });
  const tracked = await (
    await fetch(`${workerOrigin}/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}` } })
  ).json();
  const worker = await mf.getWorker();
  const tick = () => worker.scheduled({ cron: "* * * * *" }).catch((e) => console.error(`tick failed: ${e.message}`));
  const cron = CRON_EVERY_MS > 0 ? setInterval(tick, CRON_EVERY_MS) : null;
  print(workerOrigin, sim, jobUid, tracked.read_token);
  const shutdown = async () => {
    if (cron) clearInterval(cron);
    await mf.dispose();
    await sim.close();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

function print(workerOrigin, sim, jobUid, token) {
  const admin = `-H 'authorization: Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}'`;
  console.log(`worker:    ${workerOrigin}  (Miniflare; Captain Data = simulator at ${sim.url})`);
  console.log(`demo run:  ${jobUid} (500 rows over 60 s), read token ${token}`);
  console.log(`  curl -H 'x-read-token: ${token}' ${workerOrigin}/v3/jobs/${jobUid}`);
  console.log(`  curl -H 'x-read-token: ${token}' ${workerOrigin}/v3/jobs/${jobUid}/results`);
  console.log(`  JobPoller: { jobUid: "${jobUid}", baseUrl: "${workerOrigin}/v3", headers: { "x-read-token": "${token}" } }`);
  console.log(`schedule:  curl -X POST ${admin} -H 'content-type: application/json' -d '{"job_name":"x","steps":[],"inputs":[{"url":"a"}]}' ${workerOrigin}/v3/workflows/wf-1/schedule`);
  console.log(`track:     curl -X POST ${admin} ${workerOrigin}/v3/jobs/<job_uid>/track`);
  // The viewers page asks this process for its runs (worker/dev-runs.mjs); `dev` says where.
  console.log(`viewers:   ${ORIGIN_LIST[0]}/viewers.html?dev=${sim.origin}  (npm start): viewers of one run, pushed by this worker`);
  console.log("Ctrl-C stops both.");
}

main().catch((e) => {
  console.error(e.message ?? e);
  process.exit(1);
});
