import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';

const schema = z.object({
  ...blobEnv,
  PORT: env.port(50055),
  /** Where the gRPC and metrics ports listen: loopback unless set (the chart sets 0.0.0.0). */
  HOST: env.host('127.0.0.1'),
  METRICS_PORT: env.port(9455),
  LOG_LEVEL: env.logLevel(),
  /** Memory budget for loaded models; the least recently used are evicted beyond it. */
  MODEL_MEMORY_BUDGET_MB: z.coerce.number().int().positive().default(512),
  /** Base models loaded at start, so the first call does not wait. */
  PRELOAD_MODELS: z.string().default('whetstone-extract-base'),
  /** Once extraction calls for a model arrive concurrently, how long a batch waits for more (a lone call never waits). */
  BATCH_WINDOW_MS: z.coerce.number().min(0).max(50).default(1),
  /** A batch closes once it holds this many texts. */
  BATCH_MAX_TEXTS: z.coerce.number().int().positive().default(256),
  /** Decoder prefix cache: bytes of attention state held at most (least recently used evicted beyond it); 0 turns it off. */
  PREFIX_CACHE_MB: z.coerce.number().min(0).default(64),
  /** Seconds a prefix cache entry lives after its last use when the call's breakpoint sets none. */
  PREFIX_CACHE_TTL_SECONDS: z.coerce.number().int().positive().default(300),
  /**
   * Breakpoints whose prefix has fewer prompt tokens (bytes and turn markers) are ignored. The built-in decoder reads
   * at most 63 tokens (its context is 64, and a reply reserves up to half of it), so a larger minimum turns its cache off.
   */
  PREFIX_CACHE_MIN_TOKENS: z.coerce.number().int().positive().default(16),
});

export type ModelServerConfig = z.infer<typeof schema> & { preloadModels: string[] };

export function loadModelServerConfig(source: NodeJS.ProcessEnv = process.env): ModelServerConfig {
  const config = loadConfig(schema, source);
  const preloadModels = config.PRELOAD_MODELS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return { ...config, preloadModels };
}
