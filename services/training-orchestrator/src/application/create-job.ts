import { randomUUID } from 'node:crypto';
import type { CatalogEntry } from '@whetstone/catalog';
import { errors, isUuid, type FieldError } from '@whetstone/errors';
import {
  defaultModelName,
  isDecoderBase,
  lastTrainingCheckpoint,
  trainableBase,
  trainingCost,
  type DatasetSplit,
  type Job,
} from '../domain/job';
import {
  assertRequestShape,
  invalid,
  MAX_SEED,
  resolveHyperparameters,
  resolveOutOfScopeLabel,
  type JobRequest,
} from '../domain/job-spec';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import { note } from './get-job';
import type { Caller, DatasetKind } from './ports';

/** Where a job starts: a built-in model, or a job or checkpoint of this team to continue from. */
interface Origin {
  root: CatalogEntry;
  resumeKey: string | null;
}

async function resolveOrigin(deps: UseCaseDeps, caller: Caller, baseModel: string): Promise<Origin> {
  const builtin = trainableBase(baseModel);
  if (builtin) return { root: builtin, resumeKey: null };
  if (!isUuid(baseModel))
    throw invalid('Unknown base_model', [
      {
        field: 'base_model',
        message: `'${baseModel}' is not a trainable base model (see GET /v1/base-models) nor a job or checkpoint id`,
      },
    ]);
  const fromJob = await deps.jobs.get(caller.teamId, baseModel);
  const fromCheckpoint = fromJob ? null : await deps.checkpoints.findByUuid(caller.teamId, baseModel);
  const parent = fromJob ?? fromCheckpoint?.job;
  if (!parent)
    throw errors.notFound(R.BASE_MODEL_NOT_FOUND, `No job or checkpoint '${baseModel}' is visible to this team.`);
  const root = trainableBase(parent.rootBaseModel);
  if (!root) throw invalid('Unknown base_model', [{ field: 'base_model', message: 'is not trainable' }]);
  if (fromCheckpoint) {
    if (fromCheckpoint.type !== 'training')
      throw invalid('Not a training checkpoint', [
        {
          field: 'base_model',
          message: 'a sampler_weights checkpoint cannot resume training; use a weights/<step> checkpoint',
        },
      ]);
    return { root, resumeKey: fromCheckpoint.key };
  }
  const last = lastTrainingCheckpoint(await deps.checkpoints.listByJob(parent.id));
  if (!last)
    throw errors.precondition(R.NO_CHECKPOINT, `Job '${parent.id}' has no training checkpoint to continue from yet.`);
  return { root, resumeKey: last.key };
}

/** Why a base model cannot train on a dataset of this kind, or null when it can. */
function datasetKindProblem(root: CatalogEntry, kind: DatasetKind): string | null {
  if (isDecoderBase(root.id))
    return kind === 'generation' ? null : `${root.id} trains on generation (chat) datasets only`;
  return kind === 'generation' ? `${root.id} trains on extraction or classification datasets` : null;
}

/**
 * Validates the request against the base model, resolves the datasets to
 * ready versions, checks the team can pay for it, and queues the job.
 */
export async function createJob(deps: UseCaseDeps, caller: Caller, input: JobRequest): Promise<Job> {
  assertRequestShape(input);
  const { root, resumeKey } = await resolveOrigin(deps, caller, input.baseModel);
  const hp = resolveHyperparameters(root, input);
  const splits: DatasetSplit[] = [];
  const mismatched: FieldError[] = [];
  const kinds: DatasetKind[] = [];
  for (const [i, name] of input.datasets.entries()) {
    const { type, corrections: _, ...split } = await deps.datasets.resolve(caller.teamId, name);
    kinds.push(type);
    const problem = datasetKindProblem(root, type);
    if (problem) mismatched.push({ field: `datasets.${i}.name`, message: `'${name}' holds ${type} data; ${problem}` });
    const weight = input.weights?.[i] ?? 1;
    splits.push(weight > 1 ? { ...split, weight } : split);
  }
  if (mismatched.length) throw invalid('Dataset does not fit the base model', mismatched);
  const outOfScopeLabel = resolveOutOfScopeLabel(input.outOfScopeLabel, kinds);
  const exampleEpochs = splits.reduce((n, d) => n + d.size * (d.weight ?? 1), 0) * hp.nrEpochs;
  await deps.billing.checkSpendable(caller.teamId, trainingCost(exampleEpochs));

  const now = deps.clock.now();
  const job: Job = {
    id: randomUUID(),
    teamId: caller.teamId,
    userId: caller.userId,
    keyId: caller.keyId,
    baseModel: input.baseModel,
    rootBaseModel: root.id,
    modelName: input.modelName.trim() || defaultModelName(root.id, now),
    ...hp,
    seed: Number(input.seed ?? 0) || 1 + Math.floor(Math.random() * MAX_SEED),
    projectId: input.projectId || null,
    outOfScopeLabel,
    fineTuning: input.fineTuning ?? null,
    datasets: splits,
    status: 'requested',
    metrics: null,
    progress: null,
    failureReason: null,
    attempts: 0,
    resumeKey,
    artifactKey: null,
    artifactSize: null,
    manifestKey: null,
    costMicroCredits: 0n,
    leaseToken: null,
    createdAt: now,
    startedAt: null,
    finishedAt: null,
  };
  await deps.jobs.create(job);
  const on = splits
    .map(
      (d) =>
        `${d.name} v${d.version_number} (${d.size} examples${d.weight ? `, each seen ${d.weight}× per epoch` : ''})`,
    )
    .join(', ');
  await note(
    deps,
    job.id,
    'info',
    `job requested: ${job.trainingType} training of ${root.id} on ${on}, ${hp.nrEpochs} epochs, learning rate ${hp.learningRate}${outOfScopeLabel ? `, out-of-scope inputs answered '${outOfScopeLabel}'` : ''}${resumeKey ? `, continuing from ${input.baseModel}` : ''}`,
  );
  deps.work.notify();
  return job;
}
