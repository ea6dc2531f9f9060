import { errors } from '@whetstone/errors';
import type { Feedback } from '../domain/record';
import type { HistoryDeps } from './deps';
import { findRecord } from './find-record';

/** The verdict on an inference of the caller's team; NotFound FEEDBACK_NOT_FOUND before any submission. */
export async function getFeedback(deps: HistoryDeps, teamId: string, inferenceId: string): Promise<Feedback> {
  const record = await findRecord(deps, teamId, inferenceId);
  if (!record.feedback)
    throw errors.notFound('FEEDBACK_NOT_FOUND', `No feedback was submitted for inference '${inferenceId}' yet.`);
  return record.feedback;
}
