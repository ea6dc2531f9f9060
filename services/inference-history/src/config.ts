import { env, loadConfig, z } from '@whetstone/config';
import { eventsEnv } from '@whetstone/events';

const schema = z.object({
  ...eventsEnv,
  PORT: env.port(50056),
  METRICS_PORT: env.port(9456),
  DATABASE_URL: env.url(),
  LOG_LEVEL: env.logLevel(),
  /** How long GET /inferences/:id waits for a just-returned id that the consumer has not stored yet. */
  HISTORY_READ_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(5_000),
  /** Ids minted longer ago than this are never in flight: an unknown one is 404 at once. */
  HISTORY_IN_FLIGHT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
});

/** inference-history's validated environment. */
export type HistoryConfig = z.infer<typeof schema>;

/** Read and validate the environment; lists every bad variable at once. */
export function loadHistoryConfig(source: NodeJS.ProcessEnv = process.env): HistoryConfig {
  return loadConfig(schema, source);
}
