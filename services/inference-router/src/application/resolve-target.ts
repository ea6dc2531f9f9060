import { AppError, Reasons, errors, isUuid } from '@whetstone/errors';
import type { CatalogEntry } from '../domain/catalog';
import type { Caller, ModelRef } from '../domain/model';
import type { RouterDeps } from './deps';

/** What serves a call: where the model is, and the catalog entry that prices it and says its task. */
export interface Target {
  ref: ModelRef;
  entry: CatalogEntry;
}

type Kind = CatalogEntry['task'];
/** The task a call needs, or 'any' for the chat core, which serves every task. */
type Wanted = Kind | 'any';

const restricted = (modelId: string) =>
  new AppError('PermissionDenied', Reasons.MODEL_RESTRICTED, `Model '${modelId}' is not available to this account.`);

/** How to call a model of one task when another was asked for. */
const wrongTask = (task: Kind) =>
  task === 'decoder'
    ? 'call it with task "generate" and messages'
    : task === 'embedding'
      ? 'call it through POST /v1/embeddings'
      : 'give a schema to extract with it';

function baseTarget(deps: RouterDeps, caller: Caller, entry: CatalogEntry, kind: Wanted): Target {
  if (deps.restrictions.restricted(caller.teamId, entry.id)) throw restricted(entry.id);
  if (!entry.supportsInference || !entry.supportsOnDemandInference)
    throw errors.precondition(
      Reasons.MODEL_NOT_SERVABLE,
      `Model '${entry.id}' is a training-only base model: train a job on it and call the job id, or deploy the job to a project.`,
    );
  if (kind !== 'any' && entry.task !== kind)
    throw errors.precondition(
      Reasons.MODEL_NOT_SERVABLE,
      `Model '${entry.id}' is a ${entry.task} model; ${wrongTask(entry.task)}.`,
    );
  return { ref: { modelId: entry.id, bucket: '', key: '' }, entry };
}

/** A base model id or a training job id the team can see, of the task the call needs. */
export async function modelTarget(deps: RouterDeps, caller: Caller, modelId: string, kind: Wanted): Promise<Target> {
  const entry = deps.catalog.get(modelId);
  if (entry) return baseTarget(deps, caller, entry, kind);
  if (!isUuid(modelId))
    throw errors.notFound(
      'MODEL_NOT_FOUND',
      `Model '${modelId}' was not found. List base models at GET /v1/base-models, or use a training job id.`,
    );
  const job = await deps.trained.get(caller.teamId, modelId);
  if (!job) throw errors.notFound('MODEL_NOT_FOUND', `Model '${modelId}' was not found.`);
  const base = deps.catalog.baseOf(job.baseModel);
  if (deps.restrictions.restricted(caller.teamId, job.jobId) || deps.restrictions.restricted(caller.teamId, base.id))
    throw restricted(modelId);
  if (!job.servable || !job.bundle)
    throw errors.precondition(
      Reasons.MODEL_NOT_SERVABLE,
      `Training job '${modelId}' is ${job.statusLabel}; only complete jobs can serve inference.`,
    );
  if (kind !== 'any' && base.task !== kind)
    throw errors.precondition(
      Reasons.MODEL_NOT_SERVABLE,
      `Training job '${modelId}' is a ${base.task} model; ${wrongTask(base.task)}.`,
    );
  return { ref: { modelId: job.jobId, ...job.bundle }, entry: base };
}

/** The team's project, or NotFound (also for ids that are not UUIDs). */
export async function requireProject(deps: RouterDeps, caller: Caller, projectId: string) {
  const project = isUuid(projectId) ? await deps.store.getProject(caller.teamId, projectId) : null;
  if (!project) throw errors.notFound('PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
  return project;
}

/** The project's active deployment and the catalog entry of the job's base model. */
export async function projectTarget(deps: RouterDeps, caller: Caller, projectId: string): Promise<Target> {
  const project = await requireProject(deps, caller, projectId);
  const active = await deps.store.activeDeployment(project.id);
  if (!active)
    throw errors.precondition(
      Reasons.MODEL_NOT_SERVABLE,
      `Project '${project.name}' has no active deployment yet; deploy a complete training job and wait until it is active.`,
    );
  const job = await deps.trained.get(caller.teamId, active.trainingJobId);
  const entry = deps.catalog.baseOf(job?.baseModel);
  return { ref: { modelId: active.trainingJobId, bucket: active.bundleBucket, key: active.bundleKey }, entry };
}

/** A call's target: the project's active deployment when a project is named, else the model. */
export function resolveTarget(
  deps: RouterDeps,
  caller: Caller,
  call: { modelId: string; projectId: string },
  kind: Kind,
) {
  return call.projectId ? projectTarget(deps, caller, call.projectId) : modelTarget(deps, caller, call.modelId, kind);
}

/**
 * The chat core's target: a catalog model (built-in or upstream), the team's
 * training job, or the team's project (its active deployment), in that order
 * for a UUID that could name a job or a project. Returns the project it went through.
 */
export async function chatTarget(
  deps: RouterDeps,
  caller: Caller,
  model: string,
): Promise<{ target: Target; projectId: string }> {
  if (!deps.catalog.get(model) && isUuid(model) && !(await deps.trained.get(caller.teamId, model))) {
    const project = await deps.store.getProject(caller.teamId, model);
    if (project) return { target: await projectTarget(deps, caller, project.id), projectId: project.id };
  }
  return { target: await modelTarget(deps, caller, model, 'any'), projectId: '' };
}

/** Rejects a target whose task is not the one the call needs. */
export function requireTask(target: Target, kind: Kind): void {
  if (target.entry.task === kind) return;
  throw errors.precondition(
    Reasons.MODEL_NOT_SERVABLE,
    target.entry.task === 'embedding'
      ? `Model '${target.ref.modelId}' is an embedding model: call it through POST /v1/embeddings.`
      : kind === 'decoder'
        ? `Model '${target.ref.modelId}' is an extraction model: call /inference with a schema instead of task "generate".`
        : `Model '${target.ref.modelId}' is a decoder: call it with task "generate" and messages.`,
  );
}

/** Who served a call, as history records it: the model called, its built-in base, and the job when it is one. */
export function servedBy(target: Target): { model: string; baseModel: string; trainingJobId: string } {
  const trained = target.ref.modelId !== target.entry.id;
  return {
    model: target.ref.modelId,
    baseModel: target.entry.id,
    trainingJobId: trained ? target.ref.modelId : '',
  };
}
