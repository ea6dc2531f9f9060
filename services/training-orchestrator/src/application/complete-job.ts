import { errors } from '@whetstone/errors';
import { artifactPrefix, trainingCost } from '../domain/job';
import { invalid } from '../domain/job-spec';
import { metricsSummary } from '../domain/model-card';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import { note } from './get-job';

export interface JobResult {
  artifactKey: string;
  artifactSize: number;
  manifestKey: string;
  metrics: Record<string, unknown>;
  exampleEpochs: number;
}

const leaseLost = () => errors.precondition(R.LEASE_LOST, 'This trainer no longer holds the job.');

/**
 * Records the trainer's result: the job becomes complete with its metrics,
 * artifact and cost, and its TrainingUsageRecorded and JobStatusChanged events
 * commit in the same transaction, so a finished job is always billed once.
 */
export async function completeJob(
  deps: UseCaseDeps,
  lease: { jobId: string; token: string },
  result: JobResult,
): Promise<void> {
  const job = await deps.jobs.getById(lease.jobId);
  if (!job || job.leaseToken !== lease.token) throw leaseLost();
  const prefix = artifactPrefix(job.id);
  if (!result.artifactKey.startsWith(prefix) || (result.manifestKey && !result.manifestKey.startsWith(prefix)))
    throw invalid('artifact key outside the job', [{ field: 'artifact_key', message: `must start with ${prefix}` }]);
  const now = deps.clock.now();
  const cost = trainingCost(result.exampleEpochs);
  // A trainer finishes a running job only (a deployed job is complete again by another move).
  const done = await deps.jobs.transition(job.id, {
    from: ['running'],
    to: 'complete',
    token: lease.token,
    patch: {
      metrics: result.metrics,
      artifactKey: result.artifactKey,
      artifactSize: result.artifactSize,
      ...(result.manifestKey ? { manifestKey: result.manifestKey } : {}),
      costMicroCredits: cost,
      finishedAt: now,
      clearLease: true,
    },
    usage: {
      usageId: `training:${job.id}`,
      teamId: job.teamId,
      keyId: job.keyId,
      jobId: job.id,
      baseModel: job.rootBaseModel,
      exampleEpochs: result.exampleEpochs,
      costMicroCredits: cost,
      occurredAt: now,
    },
  });
  if (!done) throw leaseLost();
  await note(
    deps,
    job.id,
    'info',
    `job complete: ${metricsSummary(result.metrics)}; ${result.exampleEpochs} example-epochs billed`,
  );
}
