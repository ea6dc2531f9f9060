import { decodeEvent, Topics, type EventEnvelope, type EventTransport, type Subscription } from '@whetstone/events';
import type { Logger } from '@whetstone/telemetry';
import type { KeyBillingApp } from '../../app';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { UsageRecordedSchema, type UsageRecorded } from '@whetstone/proto/inference/v1';
import { TrainingUsageRecordedSchema, type TrainingUsageRecorded } from '@whetstone/proto/training/v1';
import { recordUsage, recordUsageBatch, type RecordUsageOutcome } from '../../application/billing';
import type { UseCaseDeps } from '../../application/deps';
import type { UsageRecord } from '../../domain/model';

/** The topic metered work is published on: inference requests (router) and training jobs (orchestrator). */
export const USAGE_TOPIC = Topics.billingUsage;

/** The durable consumer name (offsets are kept per consumer). */
export const USAGE_CONSUMER = 'key-billing.usage';

const at = (deps: UseCaseDeps, ts: Timestamp | undefined) => (ts ? timestampDate(ts) : deps.clock.now());

const toRecord = (deps: UseCaseDeps, event: UsageRecorded): UsageRecord => ({
  usageId: event.usageId,
  teamId: event.teamId,
  keyId: event.keyId,
  model: event.model,
  inputTokens: event.inputTokens,
  outputTokens: event.outputTokens,
  costMicroCredits: event.costMicroCredits,
  occurredAt: at(deps, event.occurredAt),
});

/** A training job's usage: billed by example-epochs, which are not tokens, so the key's token counter stays. */
const trainingRecord = (deps: UseCaseDeps, event: TrainingUsageRecorded): UsageRecord => ({
  usageId: event.usageId,
  teamId: event.teamId,
  keyId: event.keyId,
  // The ledger line names what was bought: the job (its base model in brackets).
  model: `training job ${event.jobId} (${event.baseModel})`,
  inputTokens: 0n,
  outputTokens: 0n,
  costMicroCredits: event.costMicroCredits,
  occurredAt: at(deps, event.occurredAt),
});

/** The usage an event on the usage topic carries; null for an event type this build does not bill. */
export function usageOf(deps: UseCaseDeps, envelope: EventEnvelope): UsageRecord | null {
  const inference = decodeEvent(envelope, UsageRecordedSchema);
  if (inference) return toRecord(deps, inference);
  const training = decodeEvent(envelope, TrainingUsageRecordedSchema);
  return training ? trainingRecord(deps, training) : null;
}

/** Handle one UsageRecorded: debit exactly once per usage_id; redeliveries are no-ops. */
export function handleUsageRecorded(deps: UseCaseDeps, event: UsageRecorded): Promise<RecordUsageOutcome> {
  return recordUsage(deps, toRecord(deps, event));
}

/** Handle one TrainingUsageRecorded: debit exactly once per usage_id (the job id); redeliveries are no-ops. */
export function handleTrainingUsageRecorded(
  deps: UseCaseDeps,
  event: TrainingUsageRecorded,
): Promise<RecordUsageOutcome> {
  return recordUsage(deps, trainingRecord(deps, event));
}

/** Handle a batch in one transaction (the Postgres event log delivers batches). */
export function handleUsageRecordedBatch(deps: UseCaseDeps, events: UsageRecorded[]): Promise<RecordUsageOutcome[]> {
  return recordUsageBatch(
    deps,
    events.map((e) => toRecord(deps, e)),
  );
}

/** Handle whatever the usage topic delivered, both event types, in one transaction; unknown types are skipped. */
export function handleUsageEvents(deps: UseCaseDeps, envelopes: EventEnvelope[]): Promise<RecordUsageOutcome[]> {
  return recordUsageBatch(
    deps,
    envelopes.map((e) => usageOf(deps, e)).filter((u): u is UsageRecord => u !== null),
  );
}

/**
 * billing.usage.v1 → the ledger, one transaction per delivered batch (the
 * event log's rows, or a Kafka eachBatch); a failed batch is delivered again
 * whole, and each usage id is debited once however often it arrives.
 */
export function startUsageConsumer(
  transport: EventTransport,
  app: Pick<KeyBillingApp, 'onUsageEvents'>,
  logger: Logger,
): Promise<Subscription> {
  return transport.subscribe({
    group: USAGE_CONSUMER,
    topics: [USAGE_TOPIC],
    logger,
    handleBatch: async (events) => {
      await app.onUsageEvents(events);
    },
  });
}
