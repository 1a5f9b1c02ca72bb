// `npm run worker:dev`: the worker in Miniflare on 127.0.0.1, with the simulator as Captain
// Data (webhooks included), a demo run tracked, and the commands to try printed.
import { Miniflare } from "miniflare";
import { existsSync } from "node:fs";
import path from "node:path";
import { startSimServer } from "../sim/server.mjs";
import { LOCAL_SECRETS, REPO_ROOT, miniflareOptions } from "./miniflare-options.mjs";

const WORKER_PORT = Number(process.env.WORKER_PORT ?? 8787);
const SIM_PORT = Number(process.env.SIM_PORT ?? 8790);
// The demo page (npm start) serves on 127.0.0.1:8080 by default; other origins via ALLOWED_ORIGINS.
const ORIGINS = process.env.ALLOWED_ORIGINS ?? "http://127.0.0.1:8080,http://localhost:8080";

async function main() {
  // The worker imports the package by name: its workerd entry (dist/) and wasm (pkg/).
  if (!existsSync(path.join(REPO_ROOT, "pkg", "captaindata_poller_bg.wasm")) || !existsSync(path.join(REPO_ROOT, "dist", "workerd.js"))) {
    throw new Error("pkg/ and dist/ are not built: run `npm run build` first");
  }
  const workerOrigin = `http://127.0.0.1:${WORKER_PORT}`;
  const sim = await startSimServer({
    port: SIM_PORT,
    apiKey: LOCAL_SECRETS.CAPTAINDATA_API_KEY,
    projectId: LOCAL_SECRETS.CAPTAINDATA_PROJECT_ID,
    webhook: { url: `${workerOrigin}/webhooks/captaindata`, headers: { "x-webhook-secret": LOCAL_SECRETS.WEBHOOK_SECRET } },
  });
  const mf = new Miniflare(
    await miniflareOptions({ baseUrl: sim.url, port: WORKER_PORT, bindings: { ALLOWED_ORIGINS: ORIGINS, POLL_INTERVAL_MS: "5000" } }),
  );
  await mf.ready;
  const { jobUid } = sim.sim.createJob({ rows: 500, durationMs: 60000 });
  const tracked = await (
    await fetch(`${workerOrigin}/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}` } })
  ).json();
  // Miniflare does not fire crons by itself: tick every minute like the trigger would.
  const worker = await mf.getWorker();
  const cron = setInterval(() => worker.scheduled({ cron: "* * * * *" }).catch((e) => console.error(`tick failed: ${e.message}`)), 60000);
  print(workerOrigin, sim, jobUid, tracked.read_token);
  const shutdown = async () => {
    clearInterval(cron);
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
  console.log("Ctrl-C stops both.");
}

main().catch((e) => {
  console.error(e.message ?? e);
  process.exit(1);
});
