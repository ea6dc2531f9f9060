import { decodeEvent, type EventTransport, Topics } from '@whetstone/events';
import { JobDeletedSchema } from '@whetstone/proto/training/v1';
import type { InferenceRouter } from '../../application/router';

export const TRAINING_TOPIC = Topics.trainingJobs;
export const TRAINING_CONSUMER = 'inference-router.training';

export interface Logger {
  info(obj: object, msg: string): void;
}

/** training.jobs.v1 → a deleted job's deployments are released at once (idempotent). */
export async function startTrainingConsumer(
  transport: EventTransport,
  router: InferenceRouter,
  logger: Logger & Parameters<EventTransport['subscribe']>[0]['logger'],
): Promise<{ stop(): Promise<void> }> {
  return transport.subscribe({
    group: TRAINING_CONSUMER,
    topics: [TRAINING_TOPIC],
    logger,
    handler: async (event) => {
      const deleted = decodeEvent(event, JobDeletedSchema);
      if (!deleted) return;
      const released = await router.releaseJob(deleted.jobId);
      if (released) logger.info({ jobId: deleted.jobId, released }, 'released deployments of a deleted job');
    },
  });
}
