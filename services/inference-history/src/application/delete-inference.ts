import type { HistoryDeps } from './deps';
import { findRecord } from './find-record';

/**
 * Deletes one of the team's records for good: its inputs, outputs, feedback and judge state go, its id is kept
 * so a redelivered event never stores it again, and InferenceDeleted tells the dataset service to leave its verdict
 * out of the project's next feedback dataset version. A record still on its way is awaited as a read awaits it.
 */
export async function deleteInference(deps: HistoryDeps, teamId: string, inferenceId: string): Promise<string> {
  const record = await findRecord(deps, teamId, inferenceId);
  await deps.store.delete(record, deps.now());
  return record.inferenceId;
}
