// `npm run worker:dev`: the worker in Miniflare on 127.0.0.1, with the simulator as Captain
// Data, v3 and v4 (webhooks and v4 callbacks included), a demo run tracked, and the commands to
// try printed (a v4 launch too). The simulator's port also answers `POST /__dev/runs`
// (worker/dev-runs.mjs): runs for the demo's viewers page. Its settings (environment) are listed
// by `npm run worker:dev -- --help` (SETTINGS below).
import { Miniflare } from "miniflare";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import path from "node:path";
import { createSim } from "../sim/index.js";
import { listenOrExit, serve } from "../sim/server.mjs";
import { V4SettingError, describeV4Spec, v4SettingsHelp, v4SpecFromEnv } from "../sim/v4-settings.js";
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
// The worker's own v4 settings, passed through when set (worker/README.md, "Captain Data v4").
const WORKER_V4_SETTINGS = ["V4_STATUS_INTERVAL_MS", "V4_RECHECK_MS", "V4_GIVE_UP_MS"];
// The launch printed: the README's example body and action (examples/worker/, run in CI).
const V4_ACTION = "linkedin-extract-people";
const V4_LAUNCH_BODY = path.join(REPO_ROOT, "examples", "worker", "v4-launch.json");
const V4_INPUTS = path.join(REPO_ROOT, "examples", "worker", "v4-inputs.json");

const SETTINGS = `Usage: npm run worker:dev     (node worker/dev.mjs)

The worker in Miniflare on 127.0.0.1 with the simulator as Captain Data (v3 and v4), a demo run
tracked and the commands to try printed. Settings (environment):
  WORKER_PORT=N            the worker's port (default 8787)
  SIM_PORT=N               the simulator's port (default 8790)
  ALLOWED_ORIGINS=LIST     the demo pages' origins (default http://127.0.0.1:8080,http://localhost:8080)
  POLL_INTERVAL_MS=MS      the worker's cadence per run (default 5000; 0: cron ticks and webhooks only)
  CRON_EVERY_MS=MS         the Cron Trigger's tick (default 60000; 0: none)
  V4_STATUS_INTERVAL_MS=MS, V4_RECHECK_MS=MS, V4_GIVE_UP_MS=MS
                           the worker's own v4 settings (worker/README.md), passed through when set

The simulator's v4 runs (each run launched with POST /v4/actions/{action}/async; the same as
node sim/server.mjs --v4-… flags):
${v4SettingsHelp("env")}
`;

/** The shell word for `text` (a path with spaces or quotes still pastes as one argument). */
const shellWord = (text) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/** Fails (exit 1) naming `setting` when `port` is taken: Miniflare's own error says only EADDRINUSE. */
function portFree(port, setting) {
  return listenOrExit(
    () =>
      new Promise((resolve, reject) => {
        const probe = createNetServer();
        probe.once("error", reject);
        probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
      }),
    setting,
    port,
    false,
  );
}

/**
 * The simulator on 127.0.0.1:`port` with the viewers page's `/__dev/runs` beside it
 * (sim/server.mjs's `serve` answers the rest, as on the demo server).
 */
async function startSim(port, workerOrigin, v4Defaults) {
  const sim = createSim({
    apiKey: LOCAL_SECRETS.CAPTAINDATA_API_KEY,
    projectId: LOCAL_SECRETS.CAPTAINDATA_PROJECT_ID,
    v4Defaults,
    webhook: { url: `${workerOrigin}/webhooks/captaindata`, headers: { "x-webhook-secret": LOCAL_SECRETS.WEBHOOK_SECRET } },
  });
  const origin = `http://127.0.0.1:${port}`;
  const runs = devRuns({ sim, workerOrigin, simOrigin: origin, allowedOrigins: ORIGIN_LIST });
  const server = createServer((req, res) => {
    if (!runs(req, res)) serve(sim, req, res, `127.0.0.1:${port}`).catch(() => req.socket.destroy());
  });
  const listen = () =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
  await listenOrExit(listen, "SIM_PORT", port, false);
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

/** The simulator's v4 run spec from V4_ROWS, V4_LOST, …; a bad value exits 2 naming it. */
function v4Spec() {
  try {
    return v4SpecFromEnv(process.env);
  } catch (error) {
    if (!(error instanceof V4SettingError)) throw error;
    process.stderr.write(`worker:dev: ${error.message}\nRun npm run worker:dev -- --help for the settings.\n`);
    process.exit(2);
  }
}

/** The worker's bindings: the v4 ends (the simulator's /v4, its own origin for the callbacks) and the settings given. */
function bindingsFor(workerOrigin, sim) {
  const passed = Object.fromEntries(WORKER_V4_SETTINGS.filter((name) => process.env[name]).map((name) => [name, process.env[name]]));
  return { ALLOWED_ORIGINS: ORIGINS, POLL_INTERVAL_MS, CAPTAINDATA_V4_BASE_URL: `${sim.origin}/v4`, PUBLIC_URL: workerOrigin, ...passed };
}

async function main(argv) {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(SETTINGS);
    return;
  }
  const v4Defaults = v4Spec();
  // The worker imports the package by name: its workerd entry (dist/) and wasm (pkg/).
  if (!existsSync(path.join(REPO_ROOT, "pkg", "captaindata_poller_bg.wasm")) || !existsSync(path.join(REPO_ROOT, "dist", "workerd.js"))) {
    throw new Error("pkg/ and dist/ are not built: run `npm run build` first");
  }
  const workerOrigin = `http://127.0.0.1:${WORKER_PORT}`;
  await portFree(WORKER_PORT, "WORKER_PORT");
  const sim = await startSim(SIM_PORT, workerOrigin, v4Defaults);
  const mf = new Miniflare(await miniflareOptions({ baseUrl: sim.url, port: WORKER_PORT, bindings: bindingsFor(workerOrigin, sim) }));
  await mf.ready;
  const { jobUid } = sim.sim.createJob({ rows: 500, durationMs: 60000 });
  const tracked = await (
    await fetch(`${workerOrigin}/v3/jobs/${jobUid}/track`, { method: "POST", headers: { authorization: `Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}` } })
  ).json();
  const worker = await mf.getWorker();
  const tick = () => worker.scheduled({ cron: "* * * * *" }).catch((e) => console.error(`tick failed: ${e.message}`));
  const cron = CRON_EVERY_MS > 0 ? setInterval(tick, CRON_EVERY_MS) : null;
  print(workerOrigin, sim, jobUid, tracked.read_token, v4Defaults);
  const shutdown = async () => {
    if (cron) clearInterval(cron);
    await mf.dispose();
    await sim.close();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

function print(workerOrigin, sim, jobUid, token, v4Defaults) {
  const admin = `-H 'authorization: Bearer ${LOCAL_SECRETS.ADMIN_TOKEN}'`;
  console.log(`worker:    ${workerOrigin}  (Miniflare; Captain Data = simulator at ${sim.url})`);
  console.log(`demo run:  ${jobUid} (500 rows over 60 s), read token ${token}`);
  console.log(`  curl -H 'x-read-token: ${token}' ${workerOrigin}/v3/jobs/${jobUid}`);
  console.log(`  curl -H 'x-read-token: ${token}' ${workerOrigin}/v3/jobs/${jobUid}/results`);
  console.log(`  JobPoller: { jobUid: "${jobUid}", baseUrl: "${workerOrigin}/v3", headers: { "x-read-token": "${token}" } }`);
  console.log(`schedule:  curl -X POST ${admin} -H 'content-type: application/json' -d '{"job_name":"x","steps":[],"inputs":[{"url":"a"}]}' ${workerOrigin}/v3/workflows/wf-1/schedule`);
  console.log(`track:     curl -X POST ${admin} ${workerOrigin}/v3/jobs/<job_uid>/track`);
  printV4(workerOrigin, admin, v4Defaults);
  // The viewers page asks this process for its runs (worker/dev-runs.mjs); `dev` says where.
  console.log(`viewers:   ${ORIGIN_LIST[0]}/viewers.html?dev=${sim.origin}  (npm start): viewers of one run, pushed by this worker`);
  console.log("Ctrl-C stops both.");
}

/** The v4 launch, as curl and as the CLI, and how to watch what it answers. */
function printV4(workerOrigin, admin, v4Defaults) {
  console.log(`v4 run:    ${describeV4Spec(v4Defaults)}  (V4_ROWS, V4_LOST, …: --help)`);
  console.log(
    `  curl -X POST ${admin} -H 'content-type: application/json' --data @${shellWord(V4_LAUNCH_BODY)} ${workerOrigin}/v4/actions/${V4_ACTION}/async`,
  );
  console.log(`  then: CAPTAINDATA_READ_TOKEN=<read_token> npx captaindata-poller watch <run_uid> --base-url ${workerOrigin}/v3`);
  console.log(
    `  or: CAPTAINDATA_ADMIN_TOKEN=${LOCAL_SECRETS.ADMIN_TOKEN} npx captaindata-poller run ${V4_ACTION} --v4 --inputs ${shellWord(V4_INPUTS)} --base-url ${workerOrigin}`,
  );
}

main(process.argv.slice(2)).catch((e) => {
  console.error(e.message ?? e);
  process.exit(1);
});
