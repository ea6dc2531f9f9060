import type { ServiceImpl } from '@whetstone/rpc';
import { errors, Reasons } from '@whetstone/errors';
import type { StepMetrics as StepMetricsPb, TrainerService } from '@whetstone/proto/training/v1';
import { putCheckpoint } from '../../application/checkpoints';
import { completeJob } from '../../application/complete-job';
import type { UseCaseDeps } from '../../application/deps';
import { completeEvaluation, failEvaluation, heartbeatEvaluation } from '../../application/evaluation-results';
import { failJob } from '../../application/fail-job';
import type { LeaseKeeper } from '../../application/heartbeat';
import { appendTrainerLogs } from '../../application/job-logs';
import { leaseWork } from '../../application/lease-work';
import { checkpointTypeFromPb } from '../../contracts/enums';
import { metricsOf, progressOf, workToPb } from './trainer.mapper';
import type { StepMetrics } from '../../domain/job';

const lease = (req: { jobId: string; leaseToken: string }) => ({ jobId: req.jobId, token: req.leaseToken });
const evalLease = (req: { evaluationId: string; leaseToken: string }) => ({
  id: req.evaluationId,
  token: req.leaseToken,
});

/** TrainerService: how workers lease work and report on it. */
export function trainerHandler(deps: UseCaseDeps, leases: LeaseKeeper): ServiceImpl<typeof TrainerService> {
  return {
    async leaseWork(req, ctx) {
      const work = await leaseWork(deps, { trainerId: req.trainerId, waitMs: req.waitMs }, ctx.signal);
      return workToPb(work, deps.leaseMs);
    },
    async heartbeat(req) {
      return { cancel: !(await leases.renew(lease(req))) };
    },
    async reportProgress(req) {
      return { cancel: !(await leases.renew(lease(req), progressOf(req))) };
    },
    async appendLogs(req) {
      const lines = req.lines.map((l) => ({
        level: l.level,
        message: l.message,
        ...(l.metrics ? { metrics: stepMetricsOf(l.metrics) } : {}),
      }));
      return { cancel: !(await appendTrainerLogs(deps, lease(req), req.source, lines)) };
    },
    async putCheckpoint(req) {
      const type = checkpointTypeFromPb(req.checkpointType);
      if (!type)
        throw errors.invalid(Reasons.VALIDATION_FAILED, 'checkpoint_type is required', [
          { field: 'checkpoint_type', message: 'must be CHECKPOINT_TYPE_TRAINING or CHECKPOINT_TYPE_SAMPLER' },
        ]);
      const ok = await putCheckpoint(deps, lease(req), {
        checkpointId: req.checkpointId,
        type,
        step: Number(req.step),
        key: req.key,
        sizeBytes: Number(req.sizeBytes),
      });
      return { cancel: !ok };
    },
    async completeJob(req) {
      await completeJob(deps, lease(req), {
        artifactKey: req.artifactKey,
        artifactSize: Number(req.artifactSize),
        manifestKey: req.manifestKey,
        metrics: metricsOf(req.metrics),
        exampleEpochs: Number(req.exampleEpochs),
      });
      return {};
    },
    async failJob(req) {
      await failJob(deps, lease(req), { reason: req.reason, code: req.code, retryable: req.retryable });
      return {};
    },
    async heartbeatEvaluation(req) {
      return { cancel: !(await heartbeatEvaluation(deps, evalLease(req))) };
    },
    async completeEvaluation(req) {
      await completeEvaluation(deps, evalLease(req), metricsOf(req.metrics));
      return {};
    },
    async failEvaluation(req) {
      await failEvaluation(deps, evalLease(req), { reason: req.reason, code: req.code, retryable: req.retryable });
      return {};
    },
  };
}

/** A decoder's optional figure, kept only when sent and finite. */
const optionalFigure = <K extends string>(key: K, x: number | undefined): Partial<Record<K, number>> =>
  x !== undefined && Number.isFinite(x) ? ({ [key]: x } as Record<K, number>) : {};

/** A progress line's figures, as numbers the log keeps (non-finite required ones as 0, optional ones dropped). */
function stepMetricsOf(m: StepMetricsPb): StepMetrics {
  const finite = (x: number) => (Number.isFinite(x) ? x : 0);
  return {
    step: finite(Number(m.step)),
    totalSteps: finite(Number(m.totalSteps)),
    epoch: finite(m.epoch),
    trainLoss: finite(m.trainLoss),
    ...optionalFigure('trainMeanTokenAccuracy', m.trainMeanTokenAccuracy),
    ...optionalFigure('validLoss', m.validLoss),
    ...optionalFigure('validMeanTokenAccuracy', m.validMeanTokenAccuracy),
  };
}
