import { errors, isUuid } from '@whetstone/errors';
import type { DeploymentRow } from '../domain/deployment';
import { RELEASED_REASON } from '../domain/deployment';
import type { Caller } from '../domain/model';
import type { RouterDeps } from './deps';
import { requireProject } from './resolve-target';
import type { DeploymentWarmer } from './warm-deployment';

/** The team's job from the read model, or NotFound. */
async function requireJob(deps: RouterDeps, caller: Caller, trainingJobId: string) {
  const job = isUuid(trainingJobId) ? await deps.trained.get(caller.teamId, trainingJobId) : null;
  if (!job) throw errors.notFound('JOB_NOT_FOUND', `Training job '${trainingJobId}' was not found.`);
  return job;
}

/** Deploys a complete job to a project: `deploying` now, `active` once warm (in the background). */
export async function createDeployment(
  deps: RouterDeps,
  warmer: DeploymentWarmer,
  caller: Caller,
  projectId: string,
  trainingJobId: string,
): Promise<DeploymentRow> {
  const project = await requireProject(deps, caller, projectId);
  const job = await requireJob(deps, caller, trainingJobId);
  if (!job.servable || !job.bundle)
    throw errors.precondition(
      'JOB_NOT_COMPLETE',
      `Training job '${trainingJobId}' is ${job.statusLabel}; only complete jobs can be deployed.`,
    );
  const row = await deps.store.createDeployment({
    id: deps.ids.uuid(),
    projectId: project.id,
    teamId: caller.teamId,
    trainingJobId: job.jobId,
    bundleBucket: job.bundle.bucket,
    bundleKey: job.bundle.key,
    status: 'deploying',
    reason: null,
    createdAt: deps.now(),
    activatedAt: null,
    endedAt: null,
  });
  void warmer.warm(row, deps.catalog.baseOf(job.baseModel).task);
  return row;
}

/** A project's deployment history, newest first. */
export async function listDeployments(deps: RouterDeps, caller: Caller, projectId: string): Promise<DeploymentRow[]> {
  const project = await requireProject(deps, caller, projectId);
  return deps.store.listDeployments(project.id);
}

/** Every deployment of a job the team can see (404 for an unknown or foreign job). */
export async function listJobDeployments(deps: RouterDeps, caller: Caller, trainingJobId: string) {
  await requireJob(deps, caller, trainingJobId);
  return deps.store.listJobDeployments(caller.teamId, trainingJobId);
}

/** Finishes deployments left `deploying` by a restart. */
export async function resumePendingDeployments(deps: RouterDeps, warmer: DeploymentWarmer): Promise<number> {
  const pending = await deps.store.pendingDeployments();
  for (const row of pending) {
    const job = await deps.trained.get(row.teamId, row.trainingJobId).catch(() => null);
    void warmer.warm(row, deps.catalog.baseOf(job?.baseModel).task);
  }
  return pending.length;
}

/** A deleted job stops serving everywhere it was deployed. */
export function releaseJob(deps: RouterDeps, trainingJobId: string): Promise<number> {
  return deps.store.releaseJob(trainingJobId, RELEASED_REASON, deps.now());
}
