import { toJson } from '@bufbuild/protobuf';
import { timestampDate, ValueSchema } from '@bufbuild/protobuf/wkt';
import { decodeEvent, Topics, type EventEnvelope } from '@whetstone/events';
import {
  FeedbackSubmittedSchema,
  InferenceDeletedSchema,
  Verdict,
  type FeedbackSubmitted,
} from '@whetstone/proto/history/v1';
import type { Logger } from '@whetstone/telemetry';
import type { FeedbackChanges, FeedbackDeletion, FeedbackVerdict } from '../../domain/feedback';

/** The topic verdicts arrive on (inference-history's outbox). */
export const FEEDBACK_TOPIC = Topics.feedback;

/** The durable consumer name (offsets are kept per consumer). */
export const FEEDBACK_CONSUMER = 'dataset.feedback';

/**
 * The changes of a delivered batch. Verdicts that can become rows: those on a project's inference, with the answer
 * the human vouched for (the correction, or the original output of a confirmation); when one inference is judged
 * twice in a batch, the later verdict wins. InferenceDeleted of a project's inference drops its verdict, one of the
 * same batch included (events of one inference arrive in order: they share its key). Other event types are
 * skipped; an undecodable payload is logged and skipped, so one bad event never blocks the topic.
 */
export function feedbackChanges(logger: Pick<Logger, 'warn'>, envelopes: EventEnvelope[]): FeedbackChanges {
  const latest = new Map<string, FeedbackVerdict>();
  const deletions = new Map<string, FeedbackDeletion>();
  for (const envelope of envelopes) {
    try {
      const deleted = decodeEvent(envelope, InferenceDeletedSchema);
      if (deleted?.projectId) {
        deletions.set(deleted.inferenceId, {
          inferenceId: deleted.inferenceId,
          teamId: deleted.teamId,
          projectId: deleted.projectId,
          deletedAt: deleted.deletedAt ? timestampDate(deleted.deletedAt) : new Date(),
        });
        latest.delete(deleted.inferenceId);
        continue;
      }
      const event = decodeEvent(envelope, FeedbackSubmittedSchema);
      const verdict = event && verdictOf(event);
      const seen = verdict && latest.get(verdict.inferenceId);
      if (verdict && (!seen || seen.submittedAt <= verdict.submittedAt)) latest.set(verdict.inferenceId, verdict);
    } catch (err) {
      logger.warn({ err, eventId: envelope.id, type: envelope.type }, 'undecodable feedback event skipped');
    }
  }
  return { verdicts: [...latest.values()], deletions: [...deletions.values()] };
}

function verdictOf(e: FeedbackSubmitted): FeedbackVerdict | null {
  // Feedback outside a project has no dataset to go to.
  if (!e.projectId || e.verdict === Verdict.UNSPECIFIED) return null;
  const answer = e.verdict === Verdict.CORRECT ? e.output : e.correctedOutput;
  if (!answer) return null;
  return {
    inferenceId: e.inferenceId,
    teamId: e.teamId,
    projectId: e.projectId,
    task: e.task,
    verdict: e.verdict === Verdict.CORRECT ? 'correct' : 'incorrect',
    answer: toJson(ValueSchema, answer),
    inputs: e.inputs,
    schema: (e.schema as Record<string, unknown> | undefined) ?? null,
    ...(e.messages.length ? { messages: e.messages.map((m) => ({ role: m.role, content: m.content })) } : {}),
    submittedAt: e.submittedAt ? timestampDate(e.submittedAt) : new Date(0),
  };
}
