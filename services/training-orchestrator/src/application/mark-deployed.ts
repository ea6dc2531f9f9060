import { sourcesOf } from '../domain/job-status';
import type { AdaptiveDeps, UseCaseDeps } from './deps';

/** A deployment of the job went active: complete → deployed. Idempotent (a redelivery finds it deployed). */
export async function markDeployed(deps: UseCaseDeps, jobId: string): Promise<void> {
  await deps.jobs.transition(jobId, { from: sourcesOf('deployed'), to: 'deployed' });
}

/**
 * A deployment of the job stopped serving its project (replaced, or its project deleted): the job is `complete`
 * again once no project's active deployment serves it, and stays `deployed` while one does. The router is asked at
 * the time of the event, so events of several projects handled in any order leave the status the router's state
 * says. Idempotent.
 */
export async function markUndeployed(
  deps: UseCaseDeps & Pick<AdaptiveDeps, 'projects'>,
  end: { teamId: string; trainingJobId: string },
): Promise<void> {
  if (await deps.projects.servesAnywhere(end.teamId, end.trainingJobId)) return;
  const job = await deps.jobs.transition(end.trainingJobId, { from: ['deployed'], to: 'complete' });
  if (job) deps.logger.info({ jobId: job.id }, 'job no longer deployed anywhere: complete again');
}
