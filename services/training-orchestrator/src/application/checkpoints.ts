import { randomUUID } from 'node:crypto';
import { artifactPrefix, type Checkpoint, type CheckpointType } from '../domain/job';
import { invalid } from '../domain/job-spec';
import type { UseCaseDeps } from './deps';
import { holdLease } from './heartbeat';
import { requireJob } from './get-job';
import type { Caller } from './ports';

export async function listCheckpoints(deps: UseCaseDeps, caller: Caller, id: string): Promise<Checkpoint[]> {
  const job = await requireJob(deps, caller, id);
  return deps.checkpoints.listByJob(job.id);
}

/** Registers a checkpoint the trainer stored under the job's prefix; false (stop) when the lease is lost. */
export async function putCheckpoint(
  deps: UseCaseDeps,
  lease: { jobId: string; token: string },
  c: { checkpointId: string; type: CheckpointType; step: number; key: string; sizeBytes: number },
): Promise<boolean> {
  if (!(await holdLease(deps, lease))) return false;
  const prefix = artifactPrefix(lease.jobId);
  if (!c.key.startsWith(prefix))
    throw invalid('checkpoint key outside the job', [{ field: 'key', message: `must start with ${prefix}` }]);
  await deps.checkpoints.put({ id: randomUUID(), jobId: lease.jobId, ...c, createdAt: deps.clock.now() });
  return true;
}
