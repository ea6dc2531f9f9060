import { classifyFailure } from '../domain/failure';
import { heartbeatEveryMs } from '../domain/progress';
import type { UseCaseDeps } from './deps';
import type { EvaluationWork } from './ports';

/**
 * Scores a complete job's bundle on a held-out split and reports the figures.
 * The lease is heartbeated while the data loads; a failure is reported with a
 * safe reason and a retryable flag decided by its type.
 */
export async function runEvaluation(deps: UseCaseDeps, work: EvaluationWork): Promise<void> {
  const lease = { evaluationId: work.evaluationId, leaseToken: work.leaseToken };
  const beat = setInterval(
    () => void deps.orchestrator.heartbeatEvaluation(lease).catch(() => undefined),
    heartbeatEveryMs(work.leaseMs),
  );
  try {
    const [bundle, rows] = await Promise.all([
      deps.artifacts.readBytes(work.artifactBucket, work.artifactKey),
      deps.artifacts.readRows(work.datasetBucket, work.heldoutKey),
    ]);
    const metrics = await deps.engine.evaluate(bundle, rows, work.baseModel);
    await deps.orchestrator.completeEvaluation(lease, { ...metrics, examples: rows.length });
    deps.logger.info({ evaluationId: work.evaluationId, examples: rows.length }, 'evaluation complete');
  } catch (err) {
    const failure = classifyFailure(err);
    deps.logger.warn({ evaluationId: work.evaluationId, err, code: failure.code }, 'evaluation failed');
    await deps.orchestrator.failEvaluation(lease, failure).catch(() => undefined);
  } finally {
    clearInterval(beat);
  }
}
