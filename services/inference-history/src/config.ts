import { env, loadConfig, z } from '@whetstone/config';
import { eventsEnv } from '@whetstone/events';

const schema = z.object({
  ...eventsEnv,
  PORT: env.port(50056),
  /** Where the gRPC and metrics ports listen: loopback unless set (the chart sets 0.0.0.0). */
  HOST: env.host('127.0.0.1'),
  METRICS_PORT: env.port(9456),
  DATABASE_URL: env.url(),
  LOG_LEVEL: env.logLevel(),
  /** How long GET /inferences/:id waits for a just-returned id that the consumer has not stored yet. */
  HISTORY_READ_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(5_000),
  /** Ids minted longer ago than this are never in flight: an unknown one is 404 at once. */
  HISTORY_IN_FLIGHT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
  /** The router, which the built-in judge asks for the served model's confidences and the zero-shot base's opinion. */
  INFERENCE_ROUTER_ADDR: env.addr().optional(),
  /** Attempts per sampled record before its judge_status becomes failed. */
  JUDGE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  /** How long one claim on a record lasts; a worker that dies mid-judgement hands the record back after it. */
  JUDGE_LEASE_SECONDS: z.coerce.number().int().min(5).max(3600).default(120),
  /** Records judged concurrently by one replica. */
  JUDGE_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** How often an idle worker looks for due records (new ones wake it at once). */
  JUDGE_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
});

/** inference-history's validated environment. */
export type HistoryConfig = z.infer<typeof schema>;

/** Read and validate the environment; lists every bad variable at once. */
export function loadHistoryConfig(source: NodeJS.ProcessEnv = process.env): HistoryConfig {
  return loadConfig(schema, source);
}
