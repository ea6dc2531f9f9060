import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';

const schema = z.object({
  ...blobEnv,
  PORT: env.port(50055),
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
});

export type ModelServerConfig = z.infer<typeof schema> & { preloadModels: string[] };

export function loadModelServerConfig(source: NodeJS.ProcessEnv = process.env): ModelServerConfig {
  const config = loadConfig(schema, source);
  const preloadModels = config.PRELOAD_MODELS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return { ...config, preloadModels };
}
