import { ConfigError, env, loadConfig, z } from '@whetstone/config';
import { eventsEnv } from '@whetstone/events';
import { type UpstreamProviderConfig, upstreamProvidersOf } from './upstream-config';

const schema = z.object({
  ...eventsEnv,
  PORT: env.port(50054),
  /** Where the gRPC and metrics ports listen: loopback unless set (the chart sets 0.0.0.0). */
  HOST: env.host('127.0.0.1'),
  METRICS_PORT: env.port(9454),
  LOG_LEVEL: env.logLevel(),
  DATABASE_URL: env.url(),
  KEY_BILLING_ADDR: env.addr().default('127.0.0.1:50051'),
  /** Asked only about a job the read model does not yet hold as servable (its events are in flight). */
  TRAINING_ORCHESTRATOR_ADDR: env.addr().default('127.0.0.1:50053'),
  /**
   * One or more model-servers, comma-separated; MODEL_SERVER_ADDR is the single-server form. An entry
   * `dns:///host:port` stands for every address the name resolves to (a headless Service), re-resolved every
   * MODEL_SERVER_RESOLVE_SECONDS.
   */
  MODEL_SERVER_ADDRS: z.string().optional(),
  MODEL_SERVER_ADDR: env.addr().default('127.0.0.1:50055'),
  /** How often `dns:///` model-server entries are resolved again, to find replicas added or gone. */
  MODEL_SERVER_RESOLVE_SECONDS: z.coerce.number().int().positive().default(15),
  /** On how many model-servers each trained model is placed and warmed (capped at the number of servers). */
  MODEL_PLACEMENT_REPLICAS: z.coerce.number().int().positive().default(1),
  /** Operator upstream providers and their models, a JSON list (see upstream-config.ts and the README). */
  CATALOG_UPSTREAMS: z.string().default('[]'),
  /**
   * Upstream hosts (names or IP literals, comma-separated; `*` for any) allowed to be, or resolve to, loopback,
   * private or link-local addresses. Empty: only public addresses are reached.
   */
  UPSTREAM_ALLOW_PRIVATE_HOSTS: z.string().default(''),
  /** An upstream that sends nothing for this long (before or during its reply) fails the call with 503. */
  UPSTREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
  /** Models restricted per account (451): comma-separated `team_id:model_id` or `*:model_id`. */
  RESTRICTED_MODELS: z.string().default(''),
  /** How long a team's "spendable" answer is reused (0 asks key-billing on every call). */
  SPENDABLE_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** How long a servable trained job is served from memory before the read model is asked again. */
  TRAINED_MODEL_CACHE_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
  /** Metering group commit: wait this long after a call's rows arrive at an idle writer (0: commit at once). */
  METERING_COMMIT_WINDOW_MS: z.coerce.number().int().min(0).max(50).default(0),
  /** Metering rows queued for the next commit above which calls wait for room (back-pressure). */
  METERING_MAX_QUEUED_ROWS: z.coerce.number().int().positive().default(10_000),
  /** Calls waiting for room above which calls are refused at once with 503 (not metered, not answered). */
  METERING_MAX_WAITING: z.coerce.number().int().min(0).default(1_000),
  /** How long a call waits for room before it is refused with 503. */
  METERING_MAX_WAIT_MS: z.coerce.number().int().positive().default(2_000),
  /** How long a deployment may take to warm before it is failed. */
  DEPLOY_WARM_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(60),
  /** Message-batch requests each replica runs at once (0: this replica runs none). */
  BATCH_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(4),
  /** How often an idle batch worker looks for due requests (a batch made here wakes it at once). */
  BATCH_IDLE_MS: z.coerce.number().int().positive().default(1000),
  /**
   * How long a claim holds a request; the worker renews it every third of it while the call runs, so a request whose
   * worker died runs again within about this long.
   */
  BATCH_LEASE_SECONDS: z.coerce.number().int().min(3).default(60),
  /** How long one batched call may run before it ends as errored (a deadline, retried like any retryable failure). */
  BATCH_CALL_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(600),
  /**
   * What a batched request costs, as a percent of the same call made directly (OpenAI's and Anthropic's batches
   * cost half). 100: no discount.
   */
  BATCH_PRICE_PERCENT: z.coerce.number().min(0).max(100).default(50),
  /** Attempts per request for retryable failures (a warming model, a saturated upstream) before it is errored. */
  BATCH_MAX_ATTEMPTS: z.coerce.number().int().positive().max(20).default(5),
});

export type RouterConfig = z.infer<typeof schema> & {
  modelServers: string[];
  /** CATALOG_UPSTREAMS parsed, each provider's API key read from the variable it names. */
  upstreams: UpstreamProviderConfig[];
  /** UPSTREAM_ALLOW_PRIVATE_HOSTS as a list. */
  allowPrivateHosts: string[];
};

export function loadRouterConfig(source: NodeJS.ProcessEnv = process.env): RouterConfig {
  const config = loadConfig(schema, source);
  const modelServers = (config.MODEL_SERVER_ADDRS ?? config.MODEL_SERVER_ADDR)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const allowPrivateHosts = config.UPSTREAM_ALLOW_PRIVATE_HOSTS.split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const parsed = upstreamProvidersOf(config.CATALOG_UPSTREAMS, (name) => source[name], allowPrivateHosts);
  if (parsed.problems.length) throw new ConfigError(parsed.problems);
  return { ...config, modelServers, upstreams: parsed.providers, allowPrivateHosts };
}
