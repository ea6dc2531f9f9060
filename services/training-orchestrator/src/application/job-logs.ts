import { MAX_LOG_LINE, logLevelOf, type LogEntry, type StepMetrics } from '../domain/job';
import type { UseCaseDeps } from './deps';
import { holdLease } from './heartbeat';
import { requireJob } from './get-job';
import type { Caller } from './ports';

export async function listLogs(deps: UseCaseDeps, caller: Caller, id: string, afterId?: string): Promise<LogEntry[]> {
  const job = await requireJob(deps, caller, id);
  return deps.logs.list(job.id, afterId);
}

/** A trainer's lines; false (stop) when its lease no longer holds the job. Appending renews the lease. */
export async function appendTrainerLogs(
  deps: UseCaseDeps,
  lease: { jobId: string; token: string },
  source: string,
  lines: { level: string; message: string; metrics?: StepMetrics }[],
): Promise<boolean> {
  if (!(await holdLease(deps, lease))) return false;
  await deps.logs.append(
    lease.jobId,
    source || 'trainer',
    lines.map((l) => ({
      level: logLevelOf(l.level),
      message: l.message.slice(0, MAX_LOG_LINE),
      ...(l.metrics ? { metrics: l.metrics } : {}),
    })),
  );
  return true;
}
