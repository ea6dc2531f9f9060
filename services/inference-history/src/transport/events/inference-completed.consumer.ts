import { isUuid } from '@whetstone/errors';
import { decodeEvent, Topics, type EventEnvelope } from '@whetstone/events';
import { InferenceCompletedSchema } from '@whetstone/proto/inference/v1';
import type { Logger } from '@whetstone/telemetry';
import type { HistoryDeps } from '../../application/deps';
import { ingestInferences } from '../../application/ingest-inferences';
import type { InferenceRecord } from '../../domain/record';
import { recordOf } from './inference-completed.mapper';

/** The topic completed inferences arrive on (the router's outbox). */
export const INFERENCES_TOPIC = Topics.inferences;

/** The durable consumer name (offsets are kept per consumer). */
export const INFERENCES_CONSUMER = 'inference-history.inferences';

/**
 * Stores a delivered batch: one record per inference id, in one statement.
 * Other event types on the topic are skipped; a payload that cannot be decoded
 * (or one without UUID ids) is logged and skipped too, so one bad event never blocks the topic.
 */
export async function handleInferenceEvents(
  deps: HistoryDeps,
  logger: Pick<Logger, 'warn'>,
  envelopes: EventEnvelope[],
): Promise<number> {
  const records: InferenceRecord[] = [];
  for (const envelope of envelopes) {
    try {
      const event = decodeEvent(envelope, InferenceCompletedSchema);
      if (!event) continue;
      if (isUuid(event.inferenceId) && isUuid(event.teamId)) records.push(recordOf(event, envelope.occurredAt));
      else logger.warn({ eventId: envelope.id }, 'InferenceCompleted without a UUID inference or team id skipped');
    } catch (err) {
      logger.warn({ err, eventId: envelope.id }, 'undecodable InferenceCompleted skipped');
    }
  }
  return ingestInferences(deps, records);
}
