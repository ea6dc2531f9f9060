import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';
import { eventsEnv } from '@whetstone/events';

const schema = z.object({
  ...eventsEnv,
  ...blobEnv,
  PORT: env.port(50052),
  /** Where the gRPC and metrics ports listen: loopback unless set (the chart sets 0.0.0.0). */
  HOST: env.host('127.0.0.1'),
  METRICS_PORT: env.port(9452),
  LOG_LEVEL: env.logLevel(),
  DATABASE_URL: env.url(),
  /** Largest dataset file accepted (413 above it). */
  DATASET_MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(200 * 1024 * 1024),
  /** Largest Files API file (413 above it). */
  FILE_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(50 * 1024 * 1024),
  /** Bytes one team's unexpired Files API files may hold together (409 file_storage_full above); 0: no limit. */
  FILE_TEAM_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(100 * 1024 * 1024 * 1024),
  /** Changed feedback verdicts a project needs before a delivered batch cuts its feedback dataset's next version. */
  FEEDBACK_VERSION_MIN_ROWS: z.coerce.number().int().positive().default(10),
});

export type DatasetConfig = z.infer<typeof schema>;

export function loadDatasetConfig(source: NodeJS.ProcessEnv = process.env): DatasetConfig {
  const config = loadConfig(schema, source);
  return config;
}
