import { Reasons, errors } from '@whetstone/errors';
import {
  DATASETS_BUCKET,
  UPLOAD_URL_SECONDS,
  formatProblem,
  nameProblem,
  uploadKey,
  type DatasetFormat,
  type DatasetType,
} from '../domain/dataset';
import { invalidName } from './errors';
import type { DatasetDeps, VersionRow } from './ports';

export interface CreateUploadInput {
  teamId: string;
  name: string;
  type: DatasetType;
  format: DatasetFormat;
  filename: string;
}

export interface CreatedUpload {
  version: VersionRow;
  /** Presigned PUT URL: a bearer credential, never logged. */
  url: string;
  expiresAt: Date;
  maxBytes: number;
}

/** Starts the next version of a dataset (creating the dataset on its first upload) and presigns its upload. */
export async function createUpload(deps: DatasetDeps, input: CreateUploadInput): Promise<CreatedUpload> {
  const problem = nameProblem(input.name);
  if (problem) throw invalidName(problem);
  const mismatch = formatProblem(input.type, input.format);
  if (mismatch)
    throw errors.invalid(Reasons.VALIDATION_FAILED, mismatch.message, [{ field: 'format', message: mismatch.detail }]);
  const version = await deps.store.createVersion({
    ...input,
    keyFor: (datasetId, n) => uploadKey(input.teamId, datasetId, n, input.format),
  });
  const url = await deps.blobs.presignPut(DATASETS_BUCKET, version.uploadKey, {
    expiresInSeconds: UPLOAD_URL_SECONDS,
    maxBytes: deps.maxUploadBytes,
  });
  return { version, url: url.url, expiresAt: url.expiresAt, maxBytes: deps.maxUploadBytes };
}
