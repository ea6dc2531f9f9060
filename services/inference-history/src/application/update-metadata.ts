import { errors } from '@whetstone/errors';
import type { InferenceRecord } from '../domain/record';
import type { HistoryDeps } from './deps';
import { findRecord } from './find-record';

/** Replaces the metadata of one of the team's records (the gateway has checked the pairs); returns it updated. */
export async function updateMetadata(
  deps: HistoryDeps,
  teamId: string,
  inferenceId: string,
  metadata: Record<string, string>,
): Promise<InferenceRecord> {
  const record = await findRecord(deps, teamId, inferenceId);
  const updated = await deps.store.updateMetadata(record, metadata);
  // Deleted between the two statements.
  if (!updated) throw errors.notFound('INFERENCE_NOT_FOUND', `Inference '${inferenceId}' was not found.`);
  return updated;
}
