import type { LogEntry } from '../domain/job';
import { isTerminal, type JobStatus } from '../domain/job-status';
import type { UseCaseDeps } from './deps';
import { requireJob } from './get-job';
import type { Caller } from './ports';

/** How often a followed job's log is read again. */
export const FOLLOW_EVERY_MS = 250;

/**
 * A job's log as it is written: each batch of new entries with the job's
 * status, ending after the batch that shows a terminal status (or when the
 * reader goes away).
 */
export async function* followLogs(
  deps: UseCaseDeps,
  caller: Caller,
  id: string,
  afterId: string,
  signal: AbortSignal,
): AsyncGenerator<{ logs: LogEntry[]; status: JobStatus }> {
  let after = afterId || undefined;
  for (;;) {
    const job = await requireJob(deps, caller, id);
    const logs = await deps.logs.list(job.id, after);
    if (logs.length) after = logs[logs.length - 1]!.id;
    const done = isTerminal(job.status);
    if (logs.length || done) yield { logs, status: job.status };
    if (done) return;
    await new Promise((r) => setTimeout(r, FOLLOW_EVERY_MS));
    if (signal.aborted) return;
  }
}
