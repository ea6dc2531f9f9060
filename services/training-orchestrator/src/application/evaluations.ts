import { randomUUID } from 'node:crypto';
import { errors, isUuid } from '@whetstone/errors';
import type { Evaluation } from '../domain/evaluation';
import { hasModel, isDecoderBase, type Job } from '../domain/job';
import { invalid } from '../domain/job-spec';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import { requireJob } from './get-job';
import type { Caller } from './ports';

/** Queues the scoring of a complete extraction job on a dataset's held-out split; a trainer leases and runs it. */
export async function createEvaluation(
  deps: UseCaseDeps,
  caller: Caller,
  jobId: string,
  datasetName: string,
): Promise<Evaluation> {
  const job = await requireJob(deps, caller, jobId);
  if (!datasetName)
    throw invalid('dataset_name is required', [
      { field: 'dataset_name', message: 'is required: the dataset whose held-out split is scored' },
    ]);
  if (!hasModel(job))
    throw errors.precondition(R.JOB_NOT_COMPLETE, `Job '${jobId}' is ${job.status}; evaluate it once it is complete.`);
  if (isDecoderBase(job.rootBaseModel))
    throw errors.precondition(
      R.EVALUATION_NOT_SUPPORTED,
      'Decoder jobs report held-out loss and perplexity in their metrics; evaluations score extraction models.',
    );
  return queueEvaluation(deps, job, datasetName);
}

/** Queues the scoring of a servable job's bundle on the dataset's newest ready held-out split (id given or new). */
export async function queueEvaluation(
  deps: UseCaseDeps,
  job: Job,
  datasetName: string,
  id: string = randomUUID(),
): Promise<Evaluation> {
  const split = await deps.datasets.resolve(job.teamId, datasetName);
  const evaluation: Evaluation = {
    id,
    teamId: job.teamId,
    jobId: job.id,
    datasetName,
    status: 'running',
    metrics: null,
    error: null,
    baseModel: job.rootBaseModel,
    artifactKey: job.artifactKey ?? '',
    datasetBucket: split.bucket,
    heldoutKey: split.heldout_key,
    attempts: 0,
    leaseToken: null,
    createdAt: deps.clock.now(),
  };
  await deps.evaluations.create(evaluation);
  deps.work.notify();
  return evaluation;
}

export async function getEvaluation(deps: UseCaseDeps, caller: Caller, id: string): Promise<Evaluation> {
  const row = isUuid(id) ? await deps.evaluations.get(caller.teamId, id) : null;
  if (!row) throw errors.notFound(R.EVALUATION_NOT_FOUND, `Evaluation '${id}' was not found.`);
  return row;
}
