import { randomUUID } from 'node:crypto';
import { errors, isUuid } from '@whetstone/errors';
import type { Evaluation } from '../domain/evaluation';
import { hasModel, isDecoderBase, type Job } from '../domain/job';
import { invalid } from '../domain/job-spec';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import { requireJob } from './get-job';
import type { Caller } from './ports';

/**
 * Queues the scoring of a complete job on a dataset's held-out split; a trainer leases and runs it. Extraction jobs
 * get span/label F1, decoder jobs held-out loss and perplexity with generation F1 (packages/ml's evaluateDecoder).
 */
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
  const decoder = isDecoderBase(job.rootBaseModel);
  if (decoder !== (split.type === 'generation'))
    throw invalid('Dataset does not fit the job', [
      {
        field: 'dataset_name',
        message: `'${datasetName}' holds ${split.type} data; ${decoder ? 'a decoder job is scored on generation (chat) datasets' : 'an extraction job is scored on extraction or classification datasets'}`,
        code: 'invalid_value',
      },
    ]);
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
