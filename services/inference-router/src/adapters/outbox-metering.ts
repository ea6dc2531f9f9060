import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { encodeEvent, type GroupCommitOutbox, type OutboxRow, Topics } from '@whetstone/events';
import { InferenceCompletedSchema, UsageRecordedSchema } from '@whetstone/proto/inference/v1';
import type { InferenceRecord, Metering } from '../application/ports';
import { inferenceTaskToPb } from './proto-kinds';

export const USAGE_TOPIC = Topics.billingUsage;
export const INFERENCES_TOPIC = Topics.inferences;

/** UsageRecorded (keyed by team, so one team's debits stay ordered) and InferenceCompleted (keyed by inference). */
export function meteringRows(r: InferenceRecord): OutboxRow[] {
  return [
    encodeEvent(
      USAGE_TOPIC,
      UsageRecordedSchema,
      create(UsageRecordedSchema, {
        usageId: r.inferenceId,
        teamId: r.caller.teamId,
        keyId: r.caller.keyId,
        model: r.model,
        inputTokens: BigInt(r.inputTokens),
        outputTokens: BigInt(r.outputTokens),
        costMicroCredits: r.costMicroCredits,
        occurredAt: timestampFromDate(r.completedAt),
      }),
      r.caller.teamId,
    ),
    encodeEvent(
      INFERENCES_TOPIC,
      InferenceCompletedSchema,
      create(InferenceCompletedSchema, {
        inferenceId: r.inferenceId,
        teamId: r.caller.teamId,
        keyId: r.caller.keyId,
        model: r.model,
        projectId: r.projectId,
        task: inferenceTaskToPb(r.task),
        inputs: r.inputs,
        ...(r.schema ? { schema: r.schema as never } : {}),
        outputs: r.outputs as never,
        latencyMs: r.latencyMs,
        inputTokens: BigInt(r.inputTokens),
        outputTokens: BigInt(r.outputTokens),
        startedAt: timestampFromDate(r.startedAt),
        completedAt: timestampFromDate(r.completedAt),
      }),
      r.inferenceId,
    ),
  ];
}

/**
 * Metering through the outbox with group commit: `record` resolves once the
 * call's UsageRecorded and InferenceCompleted rows are committed, sharing one
 * INSERT with whatever other calls queued meanwhile. Never drops: a full queue
 * makes callers wait, then refuses them with a retryable 503 (not metered).
 */
export class OutboxMetering implements Metering {
  constructor(private readonly outbox: Pick<GroupCommitOutbox, 'append' | 'close'>) {}

  record(inference: InferenceRecord): Promise<void> {
    return this.outbox.append(meteringRows(inference));
  }

  /** Commit what is queued and refuse new records (shutdown). */
  close(): Promise<void> {
    return this.outbox.close();
  }
}
