import { asDependencyUnavailable } from '@whetstone/errors';
import type { LimitCheck, LimitDecision, RateLimiter } from '../domain/rate-limit';
import { MemoryRateLimiter } from './memory-rate-limiter';

/**
 * The shared (Redis) counters while they are reachable, this process's own counters while they are
 * not: a Redis restart must not take the API down with it, so requests go on being limited per
 * replica instead of failing. A replica then admits up to its own full budget, so N replicas admit
 * up to N times a limit until Redis is back; the in-process counters start from zero and are
 * forgotten when it is. Errors other than a lost connection still fail the request.
 */
export class FailoverRateLimiter implements RateLimiter {
  private readonly local = new MemoryRateLimiter();
  /** The checks consumed locally, so that a give-back goes to the counters that took them. */
  private readonly consumedLocally = new WeakSet<LimitCheck[]>();

  constructor(
    private readonly shared: RateLimiter,
    /** False while the shared store is known to be down (it is then not even tried). */
    private readonly sharedUp: () => boolean,
    private readonly onFailover: (err: unknown) => void,
  ) {}

  async consume(checks: LimitCheck[], now: number): Promise<LimitDecision> {
    if (this.sharedUp()) {
      try {
        return await this.shared.consume(checks, now);
      } catch (err) {
        if (!asDependencyUnavailable(err)) throw err;
        this.onFailover(err);
      }
    }
    this.consumedLocally.add(checks);
    return this.local.consume(checks, now);
  }

  async release(checks: LimitCheck[], at: number): Promise<void> {
    if (this.consumedLocally.has(checks)) return this.local.release(checks, at);
    return this.shared.release(checks, at);
  }
}
