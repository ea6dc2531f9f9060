import { errors } from '@whetstone/errors';
import type { Job } from '../domain/job';
import { ACTIVE, sourcesOf } from '../domain/job-status';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import { note, requireJob } from './get-job';
import type { Caller } from './ports';

/** Cancels a requested or running job; its trainer hears it at its next heartbeat. True when this call cancelled it. */
export async function cancelIfActive(deps: UseCaseDeps, job: Job): Promise<boolean> {
  if (!ACTIVE.includes(job.status)) return false;
  const moved = await deps.jobs.transition(job.id, {
    from: sourcesOf('cancelled'),
    to: 'cancelled',
    patch: { finishedAt: deps.clock.now(), clearLease: true },
  });
  return moved !== null;
}

export async function stopJob(deps: UseCaseDeps, caller: Caller, id: string): Promise<Job> {
  const job = await requireJob(deps, caller, id);
  if (!ACTIVE.includes(job.status))
    throw errors.precondition(
      R.JOB_NOT_RUNNING,
      `Job '${id}' is ${job.status}; only a requested or running job can be stopped.`,
    );
  await cancelIfActive(deps, job);
  await note(deps, job.id, 'warn', 'job stopped by the user');
  return (await deps.jobs.getById(job.id)) ?? job;
}
