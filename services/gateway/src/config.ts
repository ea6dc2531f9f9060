import { env, loadConfig, z } from '@whetstone/config';

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const schema = z.object({
  PORT: env.port(8080),
  /** The public HTTP port listens on every interface unless set. */
  HOST: env.host('0.0.0.0'),
  LOG_LEVEL: env.logLevel(),
  KEY_BILLING_ADDR: env.addr().default('127.0.0.1:50051'),
  /** The inference-router; inference, catalog and project routes are mounted when set. */
  INFERENCE_ROUTER_ADDR: env.addr().optional(),
  /** The dataset service; dataset and generation routes are mounted when set. */
  DATASET_ADDR: env.addr().optional(),
  /** The training-orchestrator; training routes are mounted when set. */
  TRAINING_ORCHESTRATOR_ADDR: env.addr().optional(),
  /** inference-history; the inference history and feedback routes are mounted when set. */
  INFERENCE_HISTORY_ADDR: env.addr().optional(),
  REDIS_URL: z.string().url().optional(),
  EVENTS_TRANSPORT: z.enum(['postgres', 'kafka']).default('postgres'),
  /** Server holding the shared event log (embedded default); the gateway owns no schema of its own. */
  EVENTS_DATABASE_URL: z.string().url().optional(),
  KAFKA_BROKERS: z.string().optional(),
  /** Unique per replica: names this process's ephemeral keys.v1 consumer group. */
  WHETSTONE_INSTANCE: z.string().default(`gateway-${process.pid}`),
  /** Namespaces rate-limit counters, so several installations can share one Redis. */
  RATE_LIMIT_REDIS_PREFIX: z.string().default('whetstone:'),
  /** Express `trust proxy`: how the observed client IP is derived behind a load balancer. */
  TRUST_PROXY: z.string().default('loopback'),
  /** Absolute URL users reach the gateway at; used for presigned URLs and the Origin check. */
  PUBLIC_BASE_URL: z.string().url().default('http://localhost:8080'),
  MAX_JSON_BODY_BYTES: int(1_048_576),
  /** Largest body of `POST /v1/messages/batches` (413 above); a batch is many requests in one JSON body. */
  MAX_BATCH_BODY_BYTES: int(32 * 1024 * 1024),
  /** Largest file `POST /v1/files` accepts (413 above); the dataset service's FILE_MAX_BYTES must be at least this. */
  MAX_FILE_BYTES: int(50 * 1024 * 1024),
  /** The embedded default's object storage; the gateway serves its signed URLs at /blobs/*. */
  BLOB_STORE: z.enum(['fs', 's3']).default('fs'),
  BLOB_FS_ROOT: z.string().default('.data/blobs'),
  BLOB_SIGNING_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Largest upload a signed URL accepts unless it names its own limit (413 above). */
  BLOB_MAX_UPLOAD_BYTES: int(512 * 1024 * 1024),
  AUTH_CACHE_TTL_SECONDS: int(30),
  SESSION_COOKIE_NAME: z.string().default('wst_session'),
  RATE_LIMIT_EDGE_PER_MINUTE: int(100_000),
  RATE_LIMIT_IP_PER_MINUTE: int(20_000),
  RATE_LIMIT_IP_PER_HOUR: int(1_000_000),
  RATE_LIMIT_INFERENCE_PER_MINUTE: int(5_000),
  RATE_LIMIT_CHAT_PER_MINUTE: int(5_000),
  RATE_LIMIT_GLINER_PER_MINUTE: int(15_000),
  RATE_LIMIT_GENERATE_PER_MINUTE: int(120),
  RATE_LIMIT_TRAINING_JOBS_PER_MINUTE: int(20),
  /** POST /auth/login attempts per email and IP per 15 minutes. */
  RATE_LIMIT_LOGIN_PER_15_MINUTES: int(10),
});

export type GatewayConfig = z.infer<typeof schema>;

export function loadGatewayConfig(source: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadConfig(schema, source);
}

export function rateLimitSettings(config: GatewayConfig) {
  return {
    edgePerMinute: config.RATE_LIMIT_EDGE_PER_MINUTE,
    ipPerMinute: config.RATE_LIMIT_IP_PER_MINUTE,
    ipPerHour: config.RATE_LIMIT_IP_PER_HOUR,
    inferencePerMinute: config.RATE_LIMIT_INFERENCE_PER_MINUTE,
    chatPerMinute: config.RATE_LIMIT_CHAT_PER_MINUTE,
    glinerPerMinute: config.RATE_LIMIT_GLINER_PER_MINUTE,
    generatePerMinute: config.RATE_LIMIT_GENERATE_PER_MINUTE,
    trainingJobsPerMinute: config.RATE_LIMIT_TRAINING_JOBS_PER_MINUTE,
    loginPer15Minutes: config.RATE_LIMIT_LOGIN_PER_15_MINUTES,
  };
}
