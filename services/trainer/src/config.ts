import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';

const schema = z.object({
  ...blobEnv,
  METRICS_PORT: env.port(9457),
  LOG_LEVEL: env.logLevel(),
  TRAINING_ORCHESTRATOR_ADDR: env.addr().default('127.0.0.1:50053'),
  /** Names this worker in leases and logs; host and pid by default. */
  TRAINER_ID: z.string().optional(),
});

export type TrainerConfig = z.infer<typeof schema>;

export function loadTrainerConfig(source: NodeJS.ProcessEnv = process.env): TrainerConfig {
  return loadConfig(schema, source);
}
