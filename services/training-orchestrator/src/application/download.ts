import { errors } from '@whetstone/errors';
import { ARTIFACTS_BUCKET, hasModel } from '../domain/job';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import { requireJob } from './get-job';
import type { Caller } from './ports';

/** How long a presigned download stays valid. */
export const DOWNLOAD_TTL_SECONDS = 3600;

export interface Download {
  url: string;
  expiresIn: number;
  fileName: string;
  size: number;
}

/** Presigns the final model (once complete), or one checkpoint by checkpoint id or uuid. */
export async function getDownload(
  deps: UseCaseDeps,
  caller: Caller,
  id: string,
  checkpointId: string,
): Promise<Download> {
  const job = await requireJob(deps, caller, id);
  const expiresIn = DOWNLOAD_TTL_SECONDS;
  if (checkpointId) {
    const cp = (await deps.checkpoints.listByJob(job.id)).find(
      (c) => c.checkpointId === checkpointId || c.id === checkpointId,
    );
    if (!cp) throw errors.notFound(R.CHECKPOINT_NOT_FOUND, `Job '${id}' has no checkpoint '${checkpointId}'.`);
    const fileName = `${job.modelName}-${cp.checkpointId.replace('/', '-')}.ckpt`;
    const url = await deps.blobs.presignGet(ARTIFACTS_BUCKET, cp.key, { expiresInSeconds: expiresIn, fileName });
    return { url: url.url, expiresIn, fileName, size: cp.sizeBytes };
  }
  if (!hasModel(job))
    throw errors.precondition(
      R.JOB_NOT_COMPLETE,
      `Job '${id}' is ${job.status}; the model can be downloaded once the job is complete.`,
    );
  const fileName = `${job.modelName}.whetstone-bundle`;
  const url = await deps.blobs.presignGet(ARTIFACTS_BUCKET, job.artifactKey, { expiresInSeconds: expiresIn, fileName });
  return { url: url.url, expiresIn, fileName, size: job.artifactSize ?? 0 };
}
