import { randomUUID } from 'node:crypto';
import type { Evaluation } from '../domain/evaluation';
import type { Job } from '../domain/job';
import { leaseUntil, type UseCaseDeps } from './deps';
import { note } from './get-job';

/** Longest a trainer may wait in one LeaseWork call. */
export const MAX_WAIT_MS = 10_000;
/** Waiters look again this often even without a wake-up: work queued by another replica. */
export const FALLBACK_POLL_MS = 1_000;

export type Work = { kind: 'job'; job: Job } | { kind: 'evaluation'; evaluation: Evaluation };

/** Leases one piece of queued work, training first (evaluations are short); null when none is queued. */
export async function leaseOnce(deps: UseCaseDeps, trainerId: string): Promise<Work | null> {
  const job = await deps.jobs.leaseNext(trainerId, randomUUID(), leaseUntil(deps));
  if (job) {
    const resuming = job.resumeKey ? `, resuming from ${job.resumeKey.split('/').slice(-2).join('/')}` : '';
    await note(deps, job.id, 'info', `leased by trainer ${trainerId} (attempt ${job.attempts}${resuming})`);
    return { kind: 'job', job };
  }
  const evaluation = await deps.evaluations.leaseNext(trainerId, randomUUID(), leaseUntil(deps));
  return evaluation ? { kind: 'evaluation', evaluation } : null;
}

/**
 * The work queue a trainer pulls from: leases at once when work is queued,
 * else waits until this process queues work (create, retry, requeue wake it),
 * the fallback poll comes round, the wait ends or the caller goes away.
 */
export async function leaseWork(
  deps: UseCaseDeps,
  input: { trainerId: string; waitMs: number },
  signal?: AbortSignal,
): Promise<Work | null> {
  const deadline = deps.clock.now().getTime() + Math.min(MAX_WAIT_MS, Math.max(0, input.waitMs));
  const trainerId = input.trainerId || 'trainer';
  for (;;) {
    const work = await leaseOnce(deps, trainerId);
    if (work) return work;
    const left = deadline - deps.clock.now().getTime();
    if (left <= 0 || signal?.aborted) return null;
    await deps.work.wait(Math.min(left, FALLBACK_POLL_MS), signal);
  }
}
