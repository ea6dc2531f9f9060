import type { Billing } from '../application/ports';

/**
 * Remembers "spendable" answers for a team for a short while, so a burst of
 * calls costs one key-billing round trip per team per window instead of one
 * per call. Denials are never cached. The cost: a team whose balance runs out
 * can overdraw by at most one window's worth of calls (documented in docs/api.md).
 */
export function cachedBilling(inner: Billing, windowMs: number, now: () => number = Date.now): Billing {
  const okUntil = new Map<string, number>();
  return {
    async checkSpendable(teamId, cost, directModel) {
      const key = `${teamId}:${directModel ? 1 : 0}`;
      if ((okUntil.get(key) ?? 0) > now()) return;
      await inner.checkSpendable(teamId, cost, directModel);
      if (windowMs > 0) okUntil.set(key, now() + windowMs);
      if (okUntil.size > 100_000) okUntil.clear();
    },
  };
}
