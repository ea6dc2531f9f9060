import { create, fromJson, type JsonObject, type JsonValue } from '@bufbuild/protobuf';
import { ValueSchema, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { encodeEvent, Topics, type OutboxRow } from '@whetstone/events';
import { FeedbackSubmittedSchema, InferenceDeletedSchema, Verdict } from '@whetstone/proto/history/v1';
import { recordedMessageOf } from '@whetstone/proto/inference/v1';
import type { Feedback, InferenceRecord } from '../domain/record';

/** The topic history publishes on. */
export const FEEDBACK_TOPIC = Topics.feedback;

/** FeedbackSubmitted as an outbox row, keyed by inference id, with the active trace context. */
export function feedbackOutboxRow(record: InferenceRecord, feedback: Feedback): OutboxRow {
  return encodeEvent(
    FEEDBACK_TOPIC,
    FeedbackSubmittedSchema,
    create(FeedbackSubmittedSchema, {
      inferenceId: record.inferenceId,
      teamId: record.teamId,
      modelId: record.modelId,
      trainingJobId: record.trainingJobId ?? '',
      task: record.task,
      verdict: feedback.verdict === 'correct' ? Verdict.CORRECT : Verdict.INCORRECT,
      ...(feedback.correctedOutput === null
        ? {}
        : { correctedOutput: fromJson(ValueSchema, feedback.correctedOutput as JsonValue) }),
      inputs: record.inputs,
      messages: record.messages.map(recordedMessageOf),
      ...(record.schema ? { schema: record.schema as JsonObject } : {}),
      submittedAt: timestampFromDate(feedback.submittedAt),
      projectId: record.projectId ?? '',
      ...(feedback.verdict === 'correct' ? { output: fromJson(ValueSchema, record.outputs as JsonValue) } : {}),
    }),
    record.inferenceId,
  );
}

/** InferenceDeleted as an outbox row, keyed by inference id like the record's feedback, so it follows that. */
export function deletedOutboxRow(record: InferenceRecord, deletedAt: Date): OutboxRow {
  return encodeEvent(
    FEEDBACK_TOPIC,
    InferenceDeletedSchema,
    create(InferenceDeletedSchema, {
      inferenceId: record.inferenceId,
      teamId: record.teamId,
      projectId: record.projectId ?? '',
      deletedAt: timestampFromDate(deletedAt),
    }),
    record.inferenceId,
  );
}
