// Types of `captaindata-poller/worker`: the Cloudflare Worker as a user's worker re-exports it,
// `export { default, RunTracker, Registry } from "captaindata-poller/worker";`. Structural types
// only, so a worker type-checks without @cloudflare/workers-types.

/** The worker's bindings: secrets (`wrangler secret put`, `.dev.vars`), `[vars]`, Durable Objects. */
export interface WorkerEnv {
  readonly CAPTAINDATA_API_KEY?: string;
  readonly CAPTAINDATA_PROJECT_ID?: string;
  readonly WEBHOOK_SECRET?: string;
  readonly READ_TOKEN_SECRET?: string;
  readonly ADMIN_TOKEN?: string;
  readonly WEBHOOK_SIGNING_SECRET?: string;
  /** The Captain Data v4 key, when it is not `CAPTAINDATA_API_KEY` (v4 runs: `POST /v4/actions/{action}/async`). */
  readonly CAPTAINDATA_V4_API_KEY?: string;
  readonly [setting: string]: unknown;
}

/** The fetch handler (routes) and the cron handler (`scheduled`). */
declare const worker: {
  fetch(request: Request, env: WorkerEnv): Promise<Response>;
  scheduled(controller: unknown, env: WorkerEnv): Promise<void>;
};
export default worker;

/** The Durable Object of one tracked run (binding `RUNS`, SQLite-backed). */
export declare class RunTracker {
  constructor(ctx: unknown, env: WorkerEnv);
  alarm(): Promise<void>;
}

/** The Durable Object listing the tracked runs (binding `REGISTRY`, SQLite-backed). */
export declare class Registry {
  constructor(ctx: unknown, env: WorkerEnv);
  alarm(): Promise<void>;
}
