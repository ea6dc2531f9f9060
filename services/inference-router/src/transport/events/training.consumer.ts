import { decodeEvent, type EventTransport, Topics } from '@whetstone/events';
import { JobDeletedSchema, JobStatusChangedSchema } from '@whetstone/proto/training/v1';
import type { Logger } from '@whetstone/telemetry';
import type { RouterApp } from '../../app';
import { trainedModelOf } from './job-event.mapper';

/**
 * The consumer group that builds the trained-model read model. It replays the
 * topic from its beginning when first started, so the read model also holds
 * jobs that completed before the router kept one.
 */
export const TRAINING_CONSUMER = 'inference-router.trained-models';

/** training.jobs.v1 → the read model of jobs; a deleted job's deployments are released at once (idempotent). */
export function startTrainingConsumer(
  transport: EventTransport,
  app: Pick<RouterApp, 'onJobChanged' | 'onJobDeleted'>,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  return transport.subscribe({
    group: TRAINING_CONSUMER,
    topics: [Topics.trainingJobs],
    logger,
    handler: async (event) => {
      const changed = decodeEvent(event, JobStatusChangedSchema);
      if (changed) return void (await app.onJobChanged(trainedModelOf(changed, new Date())));
      const deleted = decodeEvent(event, JobDeletedSchema);
      if (deleted) await app.onJobDeleted(deleted.jobId, deleted.teamId);
    },
  });
}
