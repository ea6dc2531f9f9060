/**
 * The job state machine. Every status change the orchestrator makes is one of
 * these moves; a store applies a move only while the job is still in one of
 * its source states, so two racing writers cannot both win.
 */
export const JOB_STATUSES = ['requested', 'running', 'complete', 'failed', 'deployed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Allowed moves: from → the statuses it may go to. */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  // Leased by a trainer, or stopped before it started.
  requested: ['running', 'cancelled'],
  // Queued again (lease expired, retryable failure), finished, failed, or stopped.
  running: ['requested', 'complete', 'failed', 'cancelled'],
  // A deployment of it went active.
  complete: ['deployed'],
  failed: [],
  // No project's active deployment serves it any more (replaced, or its project deleted).
  deployed: ['complete'],
  cancelled: [],
};

/** Statuses after which nothing more happens to a job's training (a complete job may still be deployed). */
export const TERMINAL: readonly JobStatus[] = ['complete', 'failed', 'deployed', 'cancelled'];

/** Statuses a trainer may still be working on, or about to. */
export const ACTIVE: readonly JobStatus[] = ['requested', 'running'];

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses a job may be in for a move to `to`. */
export function sourcesOf(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((from) => canTransition(from, to));
}

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL.includes(status);
}

export function isJobStatus(value: string): value is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(value);
}
