/**
 * Adaptive inference (issue 16): a project's feedback dataset retrains the job its active deployment serves, both
 * models are scored on the same held-out split, and the gate promotes the candidate (the router swaps deployments
 * with no gap) or rejects it (kept, not deployed). Every step is a row move, so a restart resumes where it was.
 */
import { randomUUID } from 'node:crypto';
import { AppError, errors, isUuid, publicMessage } from '@whetstone/errors';
import {
  IN_PROGRESS,
  assertSettings,
  decide,
  defaultSettings,
  feedbackDatasetName,
  projectOfFeedbackDataset,
  type Actor,
  type Adaptation,
  type AdaptationStatus,
  type AdaptationTrigger,
  type AdaptiveSettings,
} from '../domain/adaptation';
import { hasModel, type Job } from '../domain/job';
import { TrainingReasons as R } from '../domain/reasons';
import { createJob } from './create-job';
import type { AdaptiveDeps } from './deps';
import { queueEvaluation } from './evaluations';
import { note } from './get-job';
import { stopJob } from './stop-job';

const adaptationNotFound = (id: string) => errors.notFound(R.ADAPTATION_NOT_FOUND, `Adaptation '${id}' was not found.`);

/** The project as the caller's team's (NotFound otherwise), with the job its active deployment serves ('' if none). */
async function requireProject(deps: AdaptiveDeps, actor: Actor, projectId: string): Promise<string> {
  if (!isUuid(projectId)) throw errors.notFound(R.PROJECT_NOT_FOUND, `Project '${projectId}' was not found.`);
  return deps.projects.activeJob(actor, projectId);
}

export async function getAdaptiveSettings(
  deps: AdaptiveDeps,
  actor: Actor,
  projectId: string,
): Promise<AdaptiveSettings> {
  await requireProject(deps, actor, projectId);
  const stored = await deps.adaptiveSettings.get(projectId);
  return stored && stored.actor.teamId === actor.teamId ? stored.settings : defaultSettings(projectId);
}

/** Replaces the settings; automatic adaptations will act for (and bill) this caller. */
export async function setAdaptiveSettings(
  deps: AdaptiveDeps,
  actor: Actor,
  settings: AdaptiveSettings,
): Promise<AdaptiveSettings> {
  assertSettings(settings);
  await requireProject(deps, actor, settings.projectId);
  return deps.adaptiveSettings.put(actor, { ...settings, heldoutDataset: settings.heldoutDataset.trim() });
}

/** How long an adaptation asked for now waits for the feedback version it cut to be processed. */
const FEEDBACK_VERSION_WAIT_MS = 20_000;

/**
 * POST /projects/:id/adapt: an adaptation now, with the project's settings (or the defaults), on all feedback so
 * far: verdicts not yet in a version (fewer than the dataset service's batch threshold) are cut into one first.
 */
export async function adaptNow(deps: AdaptiveDeps, actor: Actor, projectId: string): Promise<Adaptation> {
  await requireProject(deps, actor, projectId);
  const cut = await deps.feedbackVersions.versionNow(actor.teamId, projectId);
  if (cut !== null) await feedbackReady(deps, actor, projectId, cut);
  const stored = await deps.adaptiveSettings.get(projectId);
  const settings = stored && stored.actor.teamId === actor.teamId ? stored.settings : defaultSettings(projectId);
  return startAdaptation(deps, actor, projectId, 'manual', settings);
}

export async function listAdaptations(
  deps: AdaptiveDeps,
  actor: Actor,
  projectId: string,
  limit: number,
): Promise<Adaptation[]> {
  await requireProject(deps, actor, projectId);
  const n = limit || 50;
  if (!Number.isInteger(n) || n < 1 || n > 200)
    throw errors.invalid('VALIDATION_FAILED', 'Invalid limit', [{ field: 'limit', message: 'must be from 1 to 200' }]);
  return deps.adaptations.list(actor.teamId, projectId, n);
}

export async function getAdaptation(deps: AdaptiveDeps, actor: Actor, id: string): Promise<Adaptation> {
  const row = isUuid(id) ? await deps.adaptations.get(actor.teamId, id) : null;
  if (!row) throw adaptationNotFound(id);
  return row;
}

/** A newer version of a feedback dataset: adapt when its project asks for it and enough corrections are new. */
export async function onFeedbackVersionReady(
  deps: AdaptiveDeps,
  ready: { teamId: string; datasetName: string; corrections: number },
): Promise<void> {
  const projectId = projectOfFeedbackDataset(ready.datasetName);
  if (!projectId) return;
  const stored = await deps.adaptiveSettings.get(projectId);
  if (!stored?.settings.enabled || stored.actor.teamId !== ready.teamId) return;
  const last = await deps.adaptations.latestTrained(projectId);
  const fresh = ready.corrections - (last?.corrections ?? 0);
  if (fresh < stored.settings.minCorrections) return;
  try {
    const a = await startAdaptation(deps, stored.actor, projectId, 'corrections', stored.settings);
    deps.logger.info({ projectId, adaptationId: a.id, corrections: fresh }, 'adaptation started by corrections');
  } catch (err) {
    // Nothing to adapt, one already running, or no credits: a later version tries again.
    if (!(err instanceof AppError) || err.kind === 'Internal' || err.kind === 'Unavailable') throw err;
    deps.logger.info({ projectId, reason: err.reason }, `adaptation not started: ${err.message}`);
  }
}

/** Waits (bounded) until the version cut is processed; an older ready version is used if it never is. */
async function feedbackReady(deps: AdaptiveDeps, actor: Actor, projectId: string, version: number): Promise<void> {
  const until = Date.now() + FEEDBACK_VERSION_WAIT_MS;
  while (Date.now() < until) {
    const ready = await deps.datasets.resolve(actor.teamId, feedbackDatasetName(projectId)).catch(() => null);
    if (ready && ready.version_number >= version) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  deps.logger.warn({ projectId, version }, 'feedback version not ready in time; adapting on the newest ready one');
}

/** The job the project's active deployment serves, if it can be adapted. */
async function deployedJob(deps: AdaptiveDeps, actor: Actor, projectId: string): Promise<Job> {
  const activeJobId = await deps.projects.activeJob(actor, projectId);
  if (!activeJobId)
    throw errors.precondition(
      R.NO_ACTIVE_DEPLOYMENT,
      `Project '${projectId}' has no active deployment to adapt; deploy a trained job to it first.`,
    );
  const baseline = await deps.jobs.get(actor.teamId, activeJobId);
  if (!baseline || !hasModel(baseline))
    throw errors.precondition(R.NO_ACTIVE_DEPLOYMENT, `The job deployed to project '${projectId}' is not available.`);
  return baseline;
}

/** The newest ready version of the project's feedback dataset. */
function feedbackVersion(deps: AdaptiveDeps, actor: Actor, projectId: string) {
  return deps.datasets.resolve(actor.teamId, feedbackDatasetName(projectId)).catch((err: unknown) => {
    if (err instanceof AppError && (err.kind === 'NotFound' || err.kind === 'FailedPrecondition'))
      throw errors.precondition(
        R.NO_FEEDBACK,
        `Project '${projectId}' has no ready feedback dataset yet: mark its inferences correct, or incorrect with a ` +
          'corrected_output (POST /inferences/:id/feedback); a version is cut every 10 changed verdicts.',
      );
    throw err;
  });
}

async function startAdaptation(
  deps: AdaptiveDeps,
  actor: Actor,
  projectId: string,
  trigger: AdaptationTrigger,
  settings: AdaptiveSettings,
): Promise<Adaptation> {
  const [latest] = await deps.adaptations.list(actor.teamId, projectId, 1);
  if (latest && IN_PROGRESS.includes(latest.status)) throw inProgress(latest);
  const baseline = await deployedJob(deps, actor, projectId);
  const feedbackName = feedbackDatasetName(projectId);
  const feedback = await feedbackVersion(deps, actor, projectId);
  const original = [...new Set(baseline.datasets.map((d) => d.name))].filter((n) => n !== feedbackName);
  const heldoutDataset = settings.heldoutDataset || original[0] || feedbackName;
  const recipe = {
    baseModel: baseline.id,
    trainingType: baseline.trainingType,
    nrEpochs: settings.nrEpochs,
    learningRate: baseline.learningRate,
    projectId,
    outOfScopeLabel: baseline.outOfScopeLabel ?? '',
  };
  const candidate = await createJob(deps, actor, {
    ...recipe,
    datasets: [...original, feedbackName],
    weights: [...original.map(() => 1), settings.feedbackWeight],
    modelName: `${baseline.modelName} · adapted`.slice(0, 200),
  });
  // The same recipe without the feedback: what training longer alone does, so the gate credits only the feedback.
  const control = original.length
    ? await createJob(deps, actor, {
        ...recipe,
        datasets: original,
        modelName: `${baseline.modelName} · adaptation control`.slice(0, 200),
      })
    : null;
  const adaptation: Adaptation = {
    id: randomUUID(),
    ...actor,
    projectId,
    status: 'training',
    trigger,
    feedbackDataset: feedbackName,
    feedbackVersion: feedback.version_number,
    feedbackRows: feedback.size,
    corrections: feedback.corrections ?? 0,
    settings,
    heldoutDataset,
    baselineJobId: baseline.id,
    candidateJobId: candidate.id,
    controlJobId: control?.id ?? null,
    baselineEvaluationId: randomUUID(),
    candidateEvaluationId: randomUUID(),
    controlEvaluationId: control ? randomUUID() : null,
    baselineMetrics: null,
    candidateMetrics: null,
    controlMetrics: null,
    decisionReason: '',
    gain: null,
    createdAt: deps.clock.now(),
    decidedAt: null,
  };
  if (!(await deps.adaptations.create(adaptation))) {
    for (const job of [candidate, control]) if (job) await stopJob(deps, actor, job.id).catch(() => undefined);
    const [running] = await deps.adaptations.list(actor.teamId, projectId, 1);
    throw inProgress(running ?? adaptation);
  }
  await note(
    deps,
    candidate.id,
    'info',
    `adaptation ${adaptation.id} (${trigger}): retraining job ${baseline.id} on ${feedbackName} v${feedback.version_number} ` +
      `(${adaptation.corrections} corrections, weight ${settings.feedbackWeight}) and ${original.join(', ') || 'no original data'}; ` +
      `both will be scored on ${heldoutDataset}`,
  );
  return adaptation;
}

const inProgress = (a: Adaptation) =>
  errors.alreadyExists(
    R.ADAPTATION_IN_PROGRESS,
    `Adaptation '${a.id}' of this project is still ${a.status}; wait for its decision before starting another.`,
  );

/** Moves every adaptation in progress one step where it can; returns how many moved. Every replica may run it. */
export async function advanceAdaptations(deps: AdaptiveDeps): Promise<number> {
  let moved = 0;
  for (const a of await deps.adaptations.inProgress())
    try {
      if (await advance(deps, a)) moved++;
    } catch (err) {
      deps.logger.warn({ err, adaptationId: a.id }, 'adaptation step failed; retried on the next pass');
    }
  return moved;
}

async function advance(deps: AdaptiveDeps, a: Adaptation): Promise<boolean> {
  if (a.status === 'training') return afterTraining(deps, a);
  if (a.status === 'evaluating') return afterEvaluations(deps, a);
  return false; // promoting: the router's DeploymentActivated or DeploymentFailed ends it.
}

async function afterTraining(deps: AdaptiveDeps, a: Adaptation): Promise<boolean> {
  const runs = [
    { role: 'retraining', id: a.candidateJobId },
    ...(a.controlJobId ? [{ role: 'control', id: a.controlJobId }] : []),
  ];
  const jobs = await Promise.all(runs.map((r) => deps.jobs.getById(r.id)));
  for (const [i, job] of jobs.entries())
    if (!job || job.status === 'failed' || job.status === 'cancelled')
      return end(deps, a, 'failed', {
        decisionReason: `the ${runs[i]!.role} job ${job ? job.status : 'was deleted'}${job?.failureReason ? `: ${job.failureReason}` : ''}`,
      });
  if (!jobs.every((j) => j && hasModel(j))) return false;
  const baseline = await deps.jobs.getById(a.baselineJobId);
  if (!baseline || !hasModel(baseline))
    return end(deps, a, 'failed', {
      decisionReason: 'the deployed job it started from is no longer available to score',
    });
  const pairs: [Job, string][] = [
    [baseline, a.baselineEvaluationId],
    [jobs[0]!, a.candidateEvaluationId],
    ...(jobs[1] && a.controlEvaluationId ? [[jobs[1], a.controlEvaluationId] as [Job, string]] : []),
  ];
  for (const [job, id] of pairs)
    if (!(await deps.evaluations.getById(id))) await queueEvaluation(deps, job, a.heldoutDataset, id);
  return deps.adaptations.transition(a.id, 'training', 'evaluating');
}

async function afterEvaluations(deps: AdaptiveDeps, a: Adaptation): Promise<boolean> {
  const ids = [
    a.baselineEvaluationId,
    a.candidateEvaluationId,
    ...(a.controlEvaluationId ? [a.controlEvaluationId] : []),
  ];
  const evaluations = await Promise.all(ids.map((id) => deps.evaluations.getById(id)));
  if (evaluations.some((e) => !e))
    return end(deps, a, 'failed', { decisionReason: 'an evaluation was deleted before it finished' });
  const failed = evaluations.find((e) => e!.status === 'failed');
  if (failed)
    return end(deps, a, 'failed', {
      decisionReason: `the evaluation on ${a.heldoutDataset} failed: ${failed.error ?? 'no reason given'}`,
    });
  if (evaluations.some((e) => e!.status !== 'complete' || !e!.metrics)) return false;
  const [b, c, control] = evaluations.map((e) => e!.metrics!) as [
    Record<string, unknown>,
    Record<string, unknown>,
    Record<string, unknown> | undefined,
  ];
  const d = decide(a.settings, b, c, control);
  // The trail keeps the figures, not the per-row counts the gate paired.
  const figures = ({ per_example: _, ...m }: Record<string, unknown>) => m;
  const scored = {
    baselineMetrics: figures(b),
    candidateMetrics: figures(c),
    ...(control ? { controlMetrics: figures(control) } : {}),
    gain: d.gain,
  };
  if (!d.promote) return end(deps, a, 'rejected', { ...scored, decisionReason: `rejected: ${d.reason}` });
  const active = await deps.projects.activeJob(a, a.projectId);
  if (active !== a.baselineJobId)
    return end(deps, a, 'rejected', {
      ...scored,
      decisionReason: `not deployed: the gate passed (${d.reason}), but the project now serves ${active || 'nothing'}, not the job this adaptation started from`,
    });
  const reason = `promoted: ${d.reason}`;
  if (!(await deps.adaptations.transition(a.id, 'evaluating', 'promoting', { ...scored, decisionReason: reason })))
    return false;
  try {
    await deps.projects.deploy(a, a.projectId, a.candidateJobId);
  } catch (err) {
    deps.logger.warn({ err, adaptationId: a.id }, 'promotion deployment failed');
    return end(deps, { ...a, status: 'promoting' }, 'failed', {
      decisionReason: `the gate passed (${d.reason}), but the deployment failed: ${publicMessage(err)}`,
    });
  }
  await note(deps, a.candidateJobId, 'info', `adaptation ${a.id}: deploying to project ${a.projectId}; ${reason}`);
  return true;
}

/** A final move, noted in the candidate job's log. */
async function end(
  deps: AdaptiveDeps,
  a: Adaptation,
  to: Extract<AdaptationStatus, 'promoted' | 'rejected' | 'failed'>,
  patch: {
    decisionReason: string;
    baselineMetrics?: Record<string, unknown>;
    candidateMetrics?: Record<string, unknown>;
    controlMetrics?: Record<string, unknown>;
    gain?: number;
  },
): Promise<boolean> {
  const moved = await deps.adaptations.transition(a.id, a.status, to, { ...patch, decidedAt: deps.clock.now() });
  if (moved)
    await note(
      deps,
      a.candidateJobId,
      to === 'failed' ? 'warn' : 'info',
      `adaptation ${a.id} ${to}: ${patch.decisionReason}`,
    ).catch(() => undefined);
  return moved;
}

/** deployments.v1: the promoted candidate went active (promoted) or could not (failed). Idempotent. */
export async function onCandidateDeployment(
  deps: AdaptiveDeps,
  event: { trainingJobId: string; projectId: string; activated: boolean; reason: string },
): Promise<void> {
  const a = await deps.adaptations.byCandidate(event.trainingJobId);
  if (!a || a.projectId !== event.projectId || a.status !== 'promoting') return;
  if (event.activated) {
    await end(deps, a, 'promoted', { decisionReason: a.decisionReason });
    return;
  }
  await end(deps, a, 'failed', {
    decisionReason: `the gate passed, but the deployment failed: ${event.reason || 'no reason given'}`,
  });
}
