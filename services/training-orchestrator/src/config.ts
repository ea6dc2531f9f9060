import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';
import { eventsEnv } from '@whetstone/events';

const schema = z.object({
  ...eventsEnv,
  ...blobEnv,
  PORT: env.port(50053),
  /** Where the gRPC and metrics ports listen: loopback unless set (the chart sets 0.0.0.0). */
  HOST: env.host('127.0.0.1'),
  METRICS_PORT: env.port(9453),
  LOG_LEVEL: env.logLevel(),
  DATABASE_URL: env.url(),
  KEY_BILLING_ADDR: env.addr().default('127.0.0.1:50051'),
  DATASET_ADDR: env.addr().default('127.0.0.1:50052'),
  /** The inference-router: projects' active deployments, and deploying a promoted adaptation. */
  INFERENCE_ROUTER_ADDR: env.addr().default('127.0.0.1:50054'),
  /** How often adaptations in progress are moved on (their jobs and evaluations checked). */
  ADAPTATION_PASS_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** A Hugging Face-compatible hub for push-to-hub, e.g. the Hugging Face hub's base URL or a self-hosted one; pushing is off when unset. */
  HUB_BASE_URL: z.string().url().optional(),
  /** Allow the hub to resolve to private, loopback or link-local addresses (a self-hosted hub inside the network). */
  HUB_ALLOW_PRIVATE_NETWORKS: env.bool(false),
  /** A trainer that has not renewed its lease for this long is presumed dead; its work is retried. */
  TRAINER_LEASE_SECONDS: z.coerce.number().int().min(2).max(600).default(30),
});

export type OrchestratorConfig = z.infer<typeof schema>;

export function loadOrchestratorConfig(source: NodeJS.ProcessEnv = process.env): OrchestratorConfig {
  return loadConfig(schema, source);
}
