import { errors } from '@whetstone/errors';
import { splitKeys } from '../domain/dataset';
import { datasetNotFound } from './errors';
import type { DatasetDeps, VersionRow } from './ports';

/** Where a training job finds its data: the newest ready version and the keys of its two splits. */
export async function resolveForTraining(
  deps: DatasetDeps,
  teamId: string,
  name: string,
): Promise<{ version: VersionRow; train: string; heldout: string }> {
  const versions = await deps.store.listVersions(teamId, name);
  if (!versions.length) throw datasetNotFound(name);
  const ready = versions.find((v) => v.status === 'ready');
  if (!ready)
    throw errors.precondition(
      'DATASET_NOT_READY',
      `Dataset '${name}' has no ready version (newest is ${versions[0]!.status}).`,
    );
  return { version: ready, ...splitKeys(teamId, ready.datasetId, ready.versionNumber) };
}
