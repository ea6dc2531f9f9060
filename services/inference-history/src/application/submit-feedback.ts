import { errors, Reasons } from '@whetstone/errors';
import { feedbackProblems } from '../domain/feedback';
import type { Feedback, Verdict } from '../domain/record';
import type { HistoryDeps } from './deps';
import { findRecord } from './find-record';

export interface FeedbackInput {
  verdict: Verdict;
  /** null or undefined when absent. */
  correctedOutput: unknown;
  notes: string;
}

/**
 * Records the human verdict on an inference of the caller's team (a later
 * submission replaces an earlier one) and publishes FeedbackSubmitted with it.
 * A correction must have the original output's shape (422 otherwise).
 */
export async function submitFeedback(
  deps: HistoryDeps,
  teamId: string,
  inferenceId: string,
  input: FeedbackInput,
): Promise<Feedback> {
  const record = await findRecord(deps, teamId, inferenceId);
  const issues = feedbackProblems(record, input);
  if (issues.length) throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid feedback', issues);
  const feedback: Feedback = {
    inferenceId: record.inferenceId,
    verdict: input.verdict,
    correctedOutput: input.verdict === 'incorrect' ? input.correctedOutput : null,
    notes: input.notes,
    submittedAt: deps.now(),
  };
  if (!(await deps.store.saveFeedback(record, feedback)))
    throw errors.notFound('INFERENCE_NOT_FOUND', `Inference '${inferenceId}' was not found.`);
  return feedback;
}
