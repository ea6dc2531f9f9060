import { Topics } from '@whetstone/events';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { UsageRecorded } from '@whetstone/proto/inference/v1';
import { recordUsage, recordUsageBatch, type RecordUsageOutcome } from '../../application/billing';
import type { UseCaseDeps } from '../../application/deps';

/** The topic the router publishes metered requests on. */
export const USAGE_TOPIC = Topics.billingUsage;

/** The durable consumer name (offsets are kept per consumer). */
export const USAGE_CONSUMER = 'key-billing.usage';

const toRecord = (deps: UseCaseDeps, event: UsageRecorded) => ({
  usageId: event.usageId,
  teamId: event.teamId,
  keyId: event.keyId,
  model: event.model,
  inputTokens: event.inputTokens,
  outputTokens: event.outputTokens,
  costMicroCredits: event.costMicroCredits,
  occurredAt: event.occurredAt ? timestampDate(event.occurredAt) : deps.clock.now(),
});

/** Handle one UsageRecorded: debit exactly once per usage_id; redeliveries are no-ops. */
export function handleUsageRecorded(deps: UseCaseDeps, event: UsageRecorded): Promise<RecordUsageOutcome> {
  return recordUsage(deps, toRecord(deps, event));
}

/** Handle a batch in one transaction (the Postgres event log delivers batches). */
export function handleUsageRecordedBatch(deps: UseCaseDeps, events: UsageRecorded[]): Promise<RecordUsageOutcome[]> {
  return recordUsageBatch(
    deps,
    events.map((e) => toRecord(deps, e)),
  );
}
