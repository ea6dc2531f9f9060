import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { isUuid } from '@whetstone/errors';
import {
  InferenceStatus,
  InferenceSurface,
  InferenceTask,
  recordedTurnOf,
  type InferenceCompleted,
} from '@whetstone/proto/inference/v1';
import { taskOf, type CallKind, type InferenceRecord, type Surface } from '../../domain/record';

const KIND: Record<InferenceTask, CallKind> = {
  [InferenceTask.UNSPECIFIED]: 'extract',
  [InferenceTask.EXTRACT]: 'extract',
  [InferenceTask.NER]: 'ner',
  [InferenceTask.CLASSIFICATION]: 'classification',
  [InferenceTask.JSON]: 'json',
  [InferenceTask.RELATIONS]: 'relations',
  [InferenceTask.SCHEMA]: 'schema',
  [InferenceTask.SYSTEMONE]: 'systemone',
  [InferenceTask.PROJECT]: 'project',
  [InferenceTask.GENERATE]: 'generate',
  // The router stores no embeddings call; a record of one would still say what it was.
  [InferenceTask.EMBED]: 'embed',
};

/** The contract's surface ⇄ history's public words, in one place (the RPC mapper uses the reverse). */
export const SURFACE: Record<InferenceSurface, Surface> = {
  [InferenceSurface.UNSPECIFIED]: 'native',
  [InferenceSurface.NATIVE]: 'native',
  [InferenceSurface.GLINER2]: 'gliner-2',
  [InferenceSurface.SYSTEMONE]: 'systemone',
  [InferenceSurface.PROJECT]: 'project',
  [InferenceSurface.CHAT_COMPLETIONS]: 'chat-completions',
  [InferenceSurface.MESSAGES]: 'messages',
  [InferenceSurface.COMPLETIONS]: 'completions',
  [InferenceSurface.RESPONSES]: 'responses',
};

const date = (ts: Timestamp | undefined, fallback: Date) => (ts ? timestampDate(ts) : fallback);

/** One InferenceCompleted as the record history stores. */
export function recordOf(event: InferenceCompleted, receivedAt: Date): InferenceRecord {
  const schema = event.schema ?? null;
  const completedAt = date(event.completedAt, receivedAt);
  return {
    inferenceId: event.inferenceId.toLowerCase(),
    teamId: event.teamId,
    keyId: event.keyId,
    userId: event.userId,
    projectId: event.projectId || null,
    modelId: event.model,
    trainingJobId: event.trainingJobId || null,
    baseModel: event.baseModel,
    task: taskOf(KIND[event.task] ?? 'extract', schema),
    surface: SURFACE[event.surface] ?? 'native',
    inputs: event.inputs,
    messages: event.messages.map(recordedTurnOf),
    schema,
    outputs: event.outputs,
    usage: {
      inputTokens: Number(event.inputTokens),
      outputTokens: Number(event.outputTokens),
      cacheReadTokens: Number(event.cacheReadTokens),
      cacheWriteTokens: Number(event.cacheWriteTokens),
      reasoningTokens: Number(event.reasoningTokens),
      costMicroCredits: event.costMicroCredits,
    },
    latencyMs: event.latencyMs,
    status: event.status === InferenceStatus.FAILED ? 'failed' : 'succeeded',
    errorCode: event.errorCode || null,
    createdAt: date(event.startedAt, completedAt),
    completedAt,
    llmajScore: null,
    feedback: null,
    metadata: { ...event.metadata },
    // A malformed id would fail the whole batch's insert (the column is a UUID): it is dropped instead.
    ...(isUuid(event.conversationId) ? { conversationId: event.conversationId.toLowerCase() } : {}),
  };
}
