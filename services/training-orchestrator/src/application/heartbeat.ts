import { leaseUntil, type UseCaseDeps } from './deps';
import { note } from './get-job';

/** Progress reports within this window are kept in memory; the lease is renewed in Postgres once per window. */
export const RENEW_EVERY_MS = 1_000;
/** Entries kept for progress coalescing before the map is reset (one per running job). */
const MAX_TRACKED = 10_000;

/** Lease renewals from a trainer: heartbeats and progress reports. */
export interface LeaseKeeper {
  /** Extends the lease, storing progress when given; false (stop) when the token no longer holds the job. */
  renew(lease: { jobId: string; token: string }, progress?: Record<string, unknown>): Promise<boolean>;
}

/**
 * Holds a job's lease for the trainer that calls: renews it, or, when it
 * expired only because the trainer was slow (the job was queued again and
 * nobody has leased it since), gives the job back. That expiry is not counted
 * as an attempt. False when the job is someone else's or finished.
 */
export async function holdLease(
  deps: UseCaseDeps,
  lease: { jobId: string; token: string },
  progress?: Record<string, unknown>,
): Promise<boolean> {
  if (await deps.jobs.renew(lease.jobId, lease.token, leaseUntil(deps), progress)) return true;
  if (!(await deps.jobs.reclaim(lease.jobId, lease.token, leaseUntil(deps)))) return false;
  await note(
    deps,
    lease.jobId,
    'warn',
    'the trainer answered again after its lease expired and keeps the job; the expiry does not count as an attempt',
  );
  return true;
}

/**
 * Frequent progress reports are answered from memory and written at most once
 * a second per job (the lease is far longer), so a report costs microseconds;
 * a stop is still noticed within a second.
 */
export function leaseKeeper(deps: UseCaseDeps): LeaseKeeper {
  const renewals = new Map<string, { token: string; at: number; progress?: Record<string, unknown> }>();
  return {
    async renew({ jobId, token }, progress) {
      const now = deps.clock.now().getTime();
      const last = renewals.get(jobId);
      if (progress && last && last.token === token && now - last.at < RENEW_EVERY_MS) {
        last.progress = progress;
        return true;
      }
      const ok = await holdLease(deps, { jobId, token }, progress ?? last?.progress);
      if (ok) renewals.set(jobId, { token, at: now });
      else renewals.delete(jobId);
      if (renewals.size > MAX_TRACKED) renewals.clear();
      return ok;
    },
  };
}
