/** Reads: a team's datasets, one dataset's versions, one version. */
import { datasetNotFound, versionNotFound } from './errors';
import type { DatasetDeps, DatasetSummaryRow, VersionRow } from './ports';

export function listDatasets(deps: DatasetDeps, teamId: string): Promise<DatasetSummaryRow[]> {
  return deps.store.listDatasets(teamId);
}

/** Versions newest first; NotFound when the team has no dataset of that name. */
export async function getDataset(deps: DatasetDeps, teamId: string, name: string): Promise<VersionRow[]> {
  const versions = await deps.store.listVersions(teamId, name);
  if (!versions.length) throw datasetNotFound(name);
  return versions;
}

export async function getVersion(
  deps: DatasetDeps,
  teamId: string,
  name: string,
  versionNumber: number,
): Promise<VersionRow> {
  const version = await deps.store.getVersion(teamId, name, versionNumber);
  if (!version) throw versionNotFound(name, versionNumber);
  return version;
}
