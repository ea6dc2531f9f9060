import { afterFailure } from '../domain/attempts';
import { leaseUntil, type UseCaseDeps } from './deps';

/** Extends an evaluation's lease; false (stop) when the token no longer holds it. */
export function heartbeatEvaluation(deps: UseCaseDeps, lease: { id: string; token: string }): Promise<boolean> {
  return deps.evaluations.renew(lease.id, lease.token, leaseUntil(deps));
}

/** Records the trainer's figures; a lost lease is ignored (another trainer holds it now). */
export async function completeEvaluation(
  deps: UseCaseDeps,
  lease: { id: string; token: string },
  metrics: Record<string, unknown>,
): Promise<void> {
  await deps.evaluations.finish(lease.id, lease.token, { status: 'complete', metrics });
}

/**
 * A trainer could not score it: queued again while attempts remain and the
 * failure is retryable, else failed with the trainer's safe reason.
 */
export async function failEvaluation(
  deps: UseCaseDeps,
  lease: { id: string; token: string },
  failure: { reason: string; code: string; retryable: boolean },
): Promise<void> {
  const evaluation = await deps.evaluations.getById(lease.id);
  if (!evaluation || evaluation.leaseToken !== lease.token) return;
  deps.logger.info({ evaluationId: lease.id, code: failure.code, attempt: evaluation.attempts }, 'evaluation failed');
  if (afterFailure(evaluation.attempts, failure.retryable) === 'retry') {
    if (await deps.evaluations.release(lease.id, lease.token)) deps.work.notify();
    return;
  }
  await deps.evaluations.finish(lease.id, lease.token, { status: 'failed', error: failure.reason });
}
