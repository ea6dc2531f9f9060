import { counterKey, type LimitCheck, type LimitDecision, type RateLimiter } from '../domain/rate-limit';

/** In-process fixed-window counters, for a single gateway without Redis. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, { count: number; windowEndsAt: number }>();
  private lastSweep = 0;

  async consume(checks: LimitCheck[], now: number): Promise<LimitDecision> {
    this.sweep(now);
    const slots = checks.map((check) => {
      const { key, windowEndsAt } = counterKey(check, now);
      return { check, key, windowEndsAt, count: this.counters.get(key)?.count ?? 0 };
    });
    const blocked = slots.find((s) => s.count + 1 > s.check.rule.limit);
    if (blocked)
      return {
        allowed: false,
        check: blocked.check,
        retryAfterSeconds: Math.ceil((blocked.windowEndsAt - now) / 1000),
      };
    for (const s of slots) this.counters.set(s.key, { count: s.count + 1, windowEndsAt: s.windowEndsAt });
    return summarize(
      slots.map((s) => ({ limit: s.check.rule.limit, count: s.count + 1, windowEndsAt: s.windowEndsAt })),
      now,
    );
  }

  async release(checks: LimitCheck[], at: number): Promise<void> {
    for (const check of checks) {
      const counter = this.counters.get(counterKey(check, at).key);
      if (counter && counter.count > 0) counter.count--;
    }
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 10_000) return;
    this.lastSweep = now;
    for (const [key, value] of this.counters) if (value.windowEndsAt <= now) this.counters.delete(key);
  }
}

/** Report the tightest counter in the X-RateLimit-* headers. */
export function summarize(slots: { limit: number; count: number; windowEndsAt: number }[], now: number): LimitDecision {
  const tightest = slots.reduce((a, b) => (b.limit - b.count < a.limit - a.count ? b : a));
  return {
    allowed: true,
    limit: tightest.limit,
    remaining: Math.max(0, tightest.limit - tightest.count),
    resetSeconds: Math.max(0, Math.ceil((tightest.windowEndsAt - now) / 1000)),
  };
}
