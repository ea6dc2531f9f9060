import type { Billing } from '../application/ports';

/**
 * Remembers "spendable" answers for a team, so a burst of calls costs one
 * key-billing round trip per team per window instead of one per call, and no
 * call on a warm path waits for key-billing: for a second window after the
 * first, the answer is still used while one refresh runs in the background;
 * only a team not seen for two windows waits for the check. Denials are never
 * cached, and a refresh that is denied drops the answer, so the next call
 * gets the denial. The cost: a team whose balance runs out can overdraw by at
 * most two windows' worth of calls (documented in docs/architecture.md).
 */
export function cachedBilling(inner: Billing, windowMs: number, now: () => number = Date.now): Billing {
  const okSince = new Map<string, number>();
  const refreshing = new Set<string>();
  const check = async (key: string, teamId: string, cost: bigint, directModel: boolean) => {
    await inner.checkSpendable(teamId, cost, directModel);
    if (windowMs <= 0) return;
    if (okSince.size > 100_000) okSince.clear();
    okSince.set(key, now());
  };
  return {
    async checkSpendable(teamId, cost, directModel) {
      const key = `${teamId}:${directModel ? 1 : 0}`;
      const age = now() - (okSince.get(key) ?? Number.NEGATIVE_INFINITY);
      if (age < windowMs) return;
      if (age < 2 * windowMs) {
        if (!refreshing.has(key)) {
          refreshing.add(key);
          check(key, teamId, cost, directModel)
            .catch(() => okSince.delete(key))
            .finally(() => refreshing.delete(key));
        }
        return;
      }
      await check(key, teamId, cost, directModel);
    },
  };
}
