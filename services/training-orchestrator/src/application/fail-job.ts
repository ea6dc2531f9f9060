import { afterFailure } from '../domain/attempts';
import { lastTrainingCheckpoint, type Job } from '../domain/job';
import { sourcesOf } from '../domain/job-status';
import type { UseCaseDeps } from './deps';
import { note } from './get-job';

/**
 * Queues a running job again, resuming from its newest training checkpoint
 * (or where it started). A failed attempt forgets its lease; an expired one
 * (`expired`) keeps its token so that a trainer that was only slow can take
 * the job back before anyone else leases it.
 */
export async function requeue(
  deps: UseCaseDeps,
  job: Job,
  token?: string,
  expired = false,
): Promise<{ from: string } | null> {
  const last = lastTrainingCheckpoint(await deps.checkpoints.listByJob(job.id));
  const moved = await deps.jobs.transition(job.id, {
    from: sourcesOf('requested'),
    to: 'requested',
    ...(token ? { token } : {}),
    patch: { resumeKey: last?.key ?? job.resumeKey, ...(expired ? { expireLease: true } : { clearLease: true }) },
  });
  if (!moved) return null;
  deps.work.notify();
  return { from: last ? ` from ${last.checkpointId}` : '' };
}

/** Fails a running job for good with a safe, user-facing reason. */
export async function failForGood(deps: UseCaseDeps, job: Job, reason: string, token?: string): Promise<void> {
  const moved = await deps.jobs.transition(job.id, {
    from: sourcesOf('failed'),
    to: 'failed',
    ...(token ? { token } : {}),
    patch: { failureReason: reason, finishedAt: deps.clock.now(), clearLease: true },
  });
  if (moved) await note(deps, job.id, 'error', `job failed: ${reason}`);
}

/**
 * A trainer reports a failure. The reason is already safe to show (the
 * trainer sends failureOf(err)); retryable failures are queued again until the
 * attempt limit. A lost lease is ignored: the job is someone else's now.
 */
export async function failJob(
  deps: UseCaseDeps,
  lease: { jobId: string; token: string },
  failure: { reason: string; code: string; retryable: boolean },
): Promise<void> {
  const job = await deps.jobs.getById(lease.jobId);
  if (!job || job.leaseToken !== lease.token) return;
  deps.logger.info({ jobId: job.id, code: failure.code, attempt: job.attempts }, 'trainer reported a failure');
  if (afterFailure(job.attempts, failure.retryable) === 'retry') {
    const requeued = await requeue(deps, job, lease.token);
    if (requeued)
      await note(deps, job.id, 'warn', `attempt ${job.attempts} failed (${failure.reason}); retrying${requeued.from}`);
    return;
  }
  await failForGood(deps, job, failure.reason, lease.token);
}
