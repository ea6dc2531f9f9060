import { afterFailure } from '../domain/attempts';
import { MAX_ATTEMPTS } from '../domain/job';
import type { UseCaseDeps } from './deps';
import { note } from './get-job';
import { failForGood, requeue } from './fail-job';

/** Why work whose trainers keep dying is given up on. */
export const UNRESPONSIVE = `the trainer stopped responding ${MAX_ATTEMPTS} times; giving up`;

/**
 * Takes back expired leases. A job resumes from its last training checkpoint,
 * an evaluation starts over; either fails after MAX_ATTEMPTS. Returns how many
 * leases had expired.
 */
export async function sweepLeases(deps: UseCaseDeps): Promise<number> {
  const now = deps.clock.now();
  const jobs = await deps.jobs.expired(now);
  for (const job of jobs) {
    if (afterFailure(job.attempts, true) === 'fail') {
      await failForGood(deps, job, UNRESPONSIVE);
      continue;
    }
    const requeued = await requeue(deps, job, undefined, true);
    if (requeued)
      await note(
        deps,
        job.id,
        'warn',
        `the trainer's lease expired (attempt ${job.attempts}); the job is queued again${requeued.from ? ` and resumes${requeued.from}` : ''}`,
      );
  }
  const evaluations = await deps.evaluations.expired(now);
  for (const evaluation of evaluations) {
    if (afterFailure(evaluation.attempts, true) === 'fail') {
      await deps.evaluations.finish(evaluation.id, evaluation.leaseToken ?? '', {
        status: 'failed',
        error: UNRESPONSIVE,
      });
    } else if (await deps.evaluations.release(evaluation.id, evaluation.leaseToken ?? undefined)) {
      deps.work.notify();
    }
  }
  return jobs.length + evaluations.length;
}
