import { errors, isUuid } from '@whetstone/errors';
import type { Job, LogLine } from '../domain/job';
import type { JobStatus } from '../domain/job-status';
import { resolvePage } from '../domain/job-spec';
import { TrainingReasons as R } from '../domain/reasons';
import type { UseCaseDeps } from './deps';
import type { Caller } from './ports';

export const jobNotFound = (id: string) => errors.notFound(R.JOB_NOT_FOUND, `Training job '${id}' was not found.`);

/** The caller's job, or NotFound (also for a malformed id or another team's job). */
export async function requireJob(deps: Pick<UseCaseDeps, 'jobs'>, caller: Caller, id: string): Promise<Job> {
  const job = isUuid(id) ? await deps.jobs.get(caller.teamId, id) : null;
  if (!job) throw jobNotFound(id);
  return job;
}

/** One line in the job's log, written by the orchestrator itself. */
export function note(deps: Pick<UseCaseDeps, 'logs'>, jobId: string, level: LogLine['level'], message: string) {
  return deps.logs.append(jobId, 'orchestrator', [{ level, message }]);
}

export function getJob(deps: UseCaseDeps, caller: Caller, id: string): Promise<Job> {
  return requireJob(deps, caller, id);
}

export async function listJobs(
  deps: UseCaseDeps,
  caller: Caller,
  filter: {
    status?: JobStatus | undefined;
    projectId: string;
    fineTuningOnly?: boolean;
    /** Empty or absent to start at the newest. */
    afterId?: string;
    limit: number;
    offset: number;
  },
): Promise<{ rows: Job[]; total: number }> {
  const page = resolvePage(filter.limit, filter.offset);
  return deps.jobs.list(caller.teamId, {
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.projectId ? { projectId: filter.projectId } : {}),
    ...(filter.fineTuningOnly ? { fineTuningOnly: true } : {}),
    ...(filter.afterId ? { after: await cursorJob(deps, caller, filter.afterId) } : {}),
    ...page,
  });
}

/** Complete and deployed jobs, newest first. */
export async function listTrainedModels(deps: UseCaseDeps, caller: Caller): Promise<Job[]> {
  const done = await Promise.all(
    (['complete', 'deployed'] as const).map((status) =>
      deps.jobs.list(caller.teamId, { status, limit: 200, offset: 0 }),
    ),
  );
  return done.flatMap((d) => d.rows).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

/** The job a list continues after; InvalidArgument JOB_CURSOR_NOT_FOUND when it is no job of the team. */
async function cursorJob(deps: UseCaseDeps, caller: Caller, id: string): Promise<{ createdAt: Date; id: string }> {
  const job = isUuid(id) ? await deps.jobs.get(caller.teamId, id) : null;
  if (!job)
    throw errors.invalid(R.JOB_CURSOR_NOT_FOUND, `after_id '${id}' names no job of this team.`, [
      { field: 'after_id', message: 'names no job of this team' },
    ]);
  return { createdAt: job.createdAt, id: job.id };
}
