import { ARTIFACTS_BUCKET, artifactPrefix } from '../domain/job';
import type { UseCaseDeps } from './deps';
import { jobNotFound, requireJob } from './get-job';
import type { Caller } from './ports';
import { cancelIfActive } from './stop-job';

/** Stops the job if active, removes its artifacts, then its rows (logs, checkpoints, evaluations) with JobDeleted. */
export async function deleteJob(deps: UseCaseDeps, caller: Caller, id: string): Promise<void> {
  const job = await requireJob(deps, caller, id);
  await cancelIfActive(deps, job);
  const removed = await deps.blobs.deletePrefix(ARTIFACTS_BUCKET, artifactPrefix(job.id));
  if (!(await deps.jobs.delete(caller.teamId, job.id))) throw jobNotFound(id);
  deps.logger.info({ jobId: job.id, blobs: removed }, 'job deleted');
}
