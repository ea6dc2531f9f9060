import { errors } from '@whetstone/errors';
import { DATASETS_BUCKET } from '../domain/dataset';
import type { DatasetContext } from './context';
import { datasetNotFound, versionNotFound } from './errors';
import type { VersionRow } from './ports';
import { startProcessing } from './process-version';

/**
 * Starts processing an uploaded version (0: the newest) and returns it in `converting`; the team polls until it is
 * ready or failed. Only a version still `uploading`, with its file in place, can start.
 */
export async function processUpload(
  ctx: DatasetContext,
  teamId: string,
  name: string,
  versionNumber: number,
): Promise<VersionRow> {
  const versions = await ctx.store.listVersions(teamId, name);
  if (!versions.length) throw datasetNotFound(name);
  const version = versionNumber > 0 ? versions.find((v) => v.versionNumber === versionNumber) : versions[0];
  if (!version) throw versionNotFound(name, versionNumber);
  if (version.status !== 'uploading') {
    throw errors.precondition(
      'DATASET_NOT_UPLOADING',
      `Version ${version.versionNumber} of '${name}' is ${version.status}; only an uploaded version can be processed (create a new upload URL for a new version).`,
    );
  }
  if (!(await ctx.blobs.stat(DATASETS_BUCKET, version.uploadKey)))
    throw errors.precondition(
      'UPLOAD_MISSING',
      `Nothing was uploaded for version ${version.versionNumber} of '${name}': PUT the file to the upload URL first.`,
    );
  if (!(await ctx.store.transition(version.id, ['uploading'], 'converting'))) {
    throw errors.precondition(
      'DATASET_NOT_UPLOADING',
      `Version ${version.versionNumber} of '${name}' is already being processed.`,
    );
  }
  startProcessing(ctx, version.id);
  return { ...version, status: 'converting' };
}
