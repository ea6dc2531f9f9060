import { sourcesOf } from '../domain/job-status';
import type { UseCaseDeps } from './deps';

/** A deployment of the job went active: complete → deployed. Idempotent (a redelivery finds it deployed). */
export async function markDeployed(deps: UseCaseDeps, jobId: string): Promise<void> {
  await deps.jobs.transition(jobId, { from: sourcesOf('deployed'), to: 'deployed' });
}
