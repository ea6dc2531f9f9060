import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { encodeEvent, type OutboxRow, Topics } from '@whetstone/events';
import {
  InferenceCompletedSchema,
  InferenceStatus,
  InferenceSurface,
  recordedMessageOf,
  UsageRecordedSchema,
} from '@whetstone/proto/inference/v1';
import type { InferenceRecord } from '../application/ports';
import type { InferenceTask } from '../domain/model';
import { chatSurfaceToPb, inferenceTaskToPb } from './proto-kinds';

export const USAGE_TOPIC = Topics.billingUsage;
export const INFERENCES_TOPIC = Topics.inferences;

/** GLiNER2's routes label their calls with the GLiNER2 task; /inference sends extract (or generate). */
const GLINER_TASKS: ReadonlySet<InferenceTask> = new Set(['ner', 'classification', 'json', 'relations', 'schema']);

/** The public surface a call came through, from what the router knows of it: its project and its task label. */
export function surfaceOf(r: Pick<InferenceRecord, 'projectId' | 'task' | 'surface'>): InferenceSurface {
  if (r.surface) return chatSurfaceToPb(r.surface);
  if (r.projectId) return InferenceSurface.PROJECT;
  if (r.task === 'systemone') return InferenceSurface.SYSTEMONE;
  if (GLINER_TASKS.has(r.task)) return InferenceSurface.GLINER2;
  return InferenceSurface.NATIVE;
}

/** UsageRecorded for key-billing: keyed by team, so one team's debits stay ordered. */
function usageRow(r: InferenceRecord): OutboxRow {
  return encodeEvent(
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
  );
}

/**
 * InferenceCompleted for inference history: keyed by inference id. It carries
 * everything the record shows, including the credits charged, which are the
 * same figure as the UsageRecorded debit (history reconciles with the ledger).
 */
function inferenceRow(r: InferenceRecord): OutboxRow {
  return encodeEvent(
    INFERENCES_TOPIC,
    InferenceCompletedSchema,
    create(InferenceCompletedSchema, {
      inferenceId: r.inferenceId,
      teamId: r.caller.teamId,
      keyId: r.caller.keyId,
      userId: r.caller.userId,
      model: r.model,
      baseModel: r.baseModel,
      trainingJobId: r.trainingJobId,
      projectId: r.projectId,
      task: inferenceTaskToPb(r.task),
      surface: surfaceOf(r),
      inputs: r.inputs,
      messages: r.messages.map(recordedMessageOf),
      ...(r.schema ? { schema: r.schema as never } : {}),
      outputs: r.outputs as never,
      latencyMs: r.latencyMs,
      inputTokens: BigInt(r.inputTokens),
      outputTokens: BigInt(r.outputTokens),
      costMicroCredits: r.costMicroCredits,
      cacheReadTokens: BigInt(r.cacheReadTokens ?? 0),
      cacheWriteTokens: BigInt(r.cacheWriteTokens ?? 0),
      reasoningTokens: BigInt(r.reasoningTokens ?? 0),
      status: r.errorCode ? InferenceStatus.FAILED : InferenceStatus.SUCCEEDED,
      errorCode: r.errorCode ?? '',
      startedAt: timestampFromDate(r.startedAt),
      completedAt: timestampFromDate(r.completedAt),
      metadata: r.metadata ?? {},
      conversationId: r.conversationId ?? '',
    }),
    r.inferenceId,
  );
}

/**
 * The events a metered inference writes to the outbox, in one INSERT with the
 * rest of its batch: always UsageRecorded, and InferenceCompleted unless the
 * call asked not to be stored (a chat call without `store: true`).
 */
export function meteringRows(r: InferenceRecord): OutboxRow[] {
  return r.stored === false ? [usageRow(r)] : [usageRow(r), inferenceRow(r)];
}
