import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';

const schema = z.object({
  ...blobEnv,
  PORT: env.port(50053),
  METRICS_PORT: env.port(9453),
  LOG_LEVEL: env.logLevel(),
  DATABASE_URL: env.url(),
  EVENTS_TRANSPORT: z.enum(['postgres', 'kafka']).default('postgres'),
  /** The event log's database; defaults to DATABASE_URL's server with schema `whetstone_events`. */
  EVENTS_DATABASE_URL: env.url().optional(),
  KAFKA_BROKERS: z.string().optional(),
  KEY_BILLING_ADDR: env.addr().default('127.0.0.1:50051'),
  DATASET_ADDR: env.addr().default('127.0.0.1:50052'),
  /** A trainer that has not renewed its lease for this long is presumed dead; its job is retried. */
  /** A Hugging Face-compatible hub for push-to-hub (e.g. https://huggingface.co); pushing is off when unset. */
  HUB_BASE_URL: z.string().url().optional(),
  /** Allow the hub to resolve to private, loopback or link-local addresses (a self-hosted hub inside the network). */
  HUB_ALLOW_PRIVATE_NETWORKS: env.bool(false),
  TRAINER_LEASE_SECONDS: z.coerce.number().int().min(2).max(600).default(30),
});

export type OrchestratorConfig = z.infer<typeof schema> & { eventsDatabaseUrl: string };

export function loadOrchestratorConfig(source: NodeJS.ProcessEnv = process.env): OrchestratorConfig {
  const config = loadConfig(schema, source);
  const events = new URL(config.DATABASE_URL);
  events.searchParams.set('schema', 'whetstone_events');
  return { ...config, eventsDatabaseUrl: config.EVENTS_DATABASE_URL ?? events.toString() };
}
