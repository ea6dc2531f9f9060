import { blobEnv } from '@whetstone/blobs';
import { env, loadConfig, z } from '@whetstone/config';

const schema = z.object({
  ...blobEnv,
  METRICS_PORT: env.port(9457),
  /** Where the metrics port listens: loopback unless set (the chart sets 0.0.0.0). */
  HOST: env.host('127.0.0.1'),
  LOG_LEVEL: env.logLevel(),
  TRAINING_ORCHESTRATOR_ADDR: env.addr().default('127.0.0.1:50053'),
  /** Names this worker in leases and logs; host and pid by default. */
  TRAINER_ID: z.string().optional(),
  /**
   * Fault injection for tests: a file naming one failpoint (mid-epoch,
   * checkpoint-write, final-evaluation). When the trainer reaches it, the file
   * is removed and the process kills itself there. Unset in production.
   */
  TRAINER_FAILPOINT_FILE: z.string().min(1).optional(),
});

export type TrainerConfig = z.infer<typeof schema>;

export function loadTrainerConfig(source: NodeJS.ProcessEnv = process.env): TrainerConfig {
  return loadConfig(schema, source);
}
