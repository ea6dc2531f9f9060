import { env, loadConfig, z } from '@whetstone/config';

const schema = z.object({
  PORT: env.port(50051),
  METRICS_PORT: env.port(9451),
  DATABASE_URL: env.url(),
  EVENTS_TRANSPORT: z.enum(['postgres', 'kafka']).default('postgres'),
  /** The event log's database; defaults to DATABASE_URL's server with schema `whetstone_events`. */
  EVENTS_DATABASE_URL: env.url().optional(),
  KAFKA_BROKERS: z.string().optional(),
  /** When set, admin RPCs require `authorization: Bearer <ADMIN_TOKEN>`. */
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: env.logLevel(),
  /** The free plan's one-time signup allowance, in credits (1 credit = $0.01). */
  FREE_ALLOWANCE_CREDITS: z.coerce.number().min(0).max(1_000_000).default(500),
});

/** key-billing's validated environment. */
export type KeyBillingConfig = z.infer<typeof schema> & { eventsDatabaseUrl: string };

/** Read and validate the environment; lists every bad variable at once. */
export function loadKeyBillingConfig(source: NodeJS.ProcessEnv = process.env): KeyBillingConfig {
  const config = loadConfig(schema, source);
  return { ...config, eventsDatabaseUrl: config.EVENTS_DATABASE_URL ?? withSchema(config.DATABASE_URL, 'whetstone_events') };
}

function withSchema(url: string, schemaName: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schemaName);
  return parsed.toString();
}
