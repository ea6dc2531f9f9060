/** Domain ⇄ proto for TrainerService; no rules here. */
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { LeaseWorkResponseSchema, ReportProgressRequest } from '@whetstone/proto/training/v1';
import type { Work } from '../../application/lease-work';
import { trainingTypeToPb } from '../../contracts/enums';
import { ARTIFACTS_BUCKET, artifactPrefix } from '../../domain/job';

export function workToPb(work: Work | null, leaseMs: number): MessageInitShape<typeof LeaseWorkResponseSchema> {
  if (!work) return {};
  if (work.kind === 'evaluation') {
    const e = work.evaluation;
    return {
      work: {
        case: 'evaluation',
        value: {
          evaluationId: e.id,
          leaseToken: e.leaseToken ?? '',
          leaseMs,
          baseModel: e.baseModel,
          artifactBucket: ARTIFACTS_BUCKET,
          artifactKey: e.artifactKey,
          datasetBucket: e.datasetBucket,
          heldoutKey: e.heldoutKey,
          attempt: e.attempts,
        },
      },
    };
  }
  const job = work.job;
  return {
    work: {
      case: 'job',
      value: {
        jobId: job.id,
        leaseToken: job.leaseToken ?? '',
        leaseMs,
        baseModel: job.rootBaseModel,
        trainingType: trainingTypeToPb(job.trainingType),
        nrEpochs: job.nrEpochs,
        learningRate: job.learningRate,
        seed: BigInt(job.seed),
        datasetBucket: job.datasets[0]?.bucket ?? 'datasets',
        trainKeys: job.datasets.map((d) => d.train_key),
        trainRepeats: job.datasets.map((d) => d.weight ?? 1),
        heldoutKeys: job.datasets.map((d) => d.heldout_key),
        artifactBucket: ARTIFACTS_BUCKET,
        artifactPrefix: artifactPrefix(job.id),
        resumeKey: job.resumeKey ?? '',
        attempt: job.attempts,
        outOfScopeLabel: job.outOfScopeLabel ?? '',
      },
    },
  };
}

/**
 * The progress object stored on the job (and shown publicly as `progress`). The latest epoch's held-out figures
 * ride in it as `progress.metrics`: the spec keeps the job's `metrics` for the final figures of a complete job.
 */
export const progressOf = (req: ReportProgressRequest): Record<string, unknown> => ({
  step: Number(req.step),
  total_steps: Number(req.totalSteps),
  epoch: req.epoch,
  loss: req.loss,
  learning_rate: req.learningRate,
  examples_per_second: req.examplesPerSecond,
  eta_seconds: req.etaSeconds,
  ...(req.metrics ? { metrics: req.metrics } : {}),
});

export const metricsOf = (m: JsonObject | undefined): Record<string, unknown> => (m ?? {}) as Record<string, unknown>;
