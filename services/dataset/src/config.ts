import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';

const schema = z.object({
  ...blobEnv,
  PORT: env.port(50052),
  METRICS_PORT: env.port(9452),
  LOG_LEVEL: env.logLevel(),
  DATABASE_URL: env.url(),
  EVENTS_TRANSPORT: z.enum(['postgres', 'kafka']).default('postgres'),
  /** The event log's database; defaults to DATABASE_URL's server with schema `whetstone_events`. */
  EVENTS_DATABASE_URL: env.url().optional(),
  KAFKA_BROKERS: z.string().optional(),
  /** Largest dataset file accepted (413 above it). */
  DATASET_MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(200 * 1024 * 1024),
});

export type DatasetConfig = z.infer<typeof schema> & { eventsDatabaseUrl: string };

export function loadDatasetConfig(source: NodeJS.ProcessEnv = process.env): DatasetConfig {
  const config = loadConfig(schema, source);
  const events = new URL(config.DATABASE_URL);
  events.searchParams.set('schema', 'whetstone_events');
  return { ...config, eventsDatabaseUrl: config.EVENTS_DATABASE_URL ?? events.toString() };
}
