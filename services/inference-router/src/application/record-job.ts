import type { TrainedModel } from '../domain/trained-model';
import type { RouterDeps } from './deps';
import { releaseJob } from './deployments';

/** A job changed status: keep the read model's copy unless a newer one is already held. */
export async function recordJobChanged(deps: RouterDeps, model: TrainedModel): Promise<boolean> {
  return deps.trained.upsert(model);
}

/** A job was deleted: it is no longer callable or deployable, and its deployments stop serving at once. */
export async function recordJobDeleted(deps: RouterDeps, jobId: string, teamId: string): Promise<number> {
  await deps.trained.markDeleted(jobId, teamId, deps.now());
  const released = await releaseJob(deps, jobId);
  if (released) deps.logger.info({ jobId, released }, 'released deployments of a deleted job');
  return released;
}
