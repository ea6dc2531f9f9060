import { DATASETS_BUCKET } from '../domain/dataset';
import { datasetNotFound } from './errors';
import type { DatasetDeps } from './ports';

/** Deletes the dataset's rows (publishing DatasetDeleted with them), then every blob of every version. */
export async function deleteDataset(deps: DatasetDeps, teamId: string, name: string): Promise<void> {
  const deleted = await deps.store.deleteDataset(teamId, name);
  if (!deleted) throw datasetNotFound(name);
  const removed = await deps.blobs.deletePrefix(DATASETS_BUCKET, `teams/${teamId}/${deleted.datasetId}/`);
  deps.logger.info({ teamId, dataset: name, blobs: removed }, 'dataset deleted');
}
