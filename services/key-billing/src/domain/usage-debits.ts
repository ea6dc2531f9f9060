import type { Team, UsageRecord } from './model';

/** What became of one delivered usage record. */
export type RecordUsageOutcome = 'debited' | 'duplicate' | 'unknown_team';

/** One usage debit to insert, with the team's balance after it. */
export interface UsageDebit {
  id: string;
  teamId: string;
  amountMicroCredits: bigint;
  balanceAfterMicroCredits: bigint;
  note: string;
  usageId: string;
  keyId: string | null;
  createdAt: Date;
}

/** What a batch adds to one API key's counters. */
export interface KeyUsageTotal {
  keyId: string;
  tokens: bigint;
  costMicroCredits: bigint;
  requests: bigint;
  /** The latest usage of the batch; the key's last_used_at only ever moves forward. */
  lastUsedAt: Date;
}

export interface UsageDebitPlan {
  /** One per delivered record, in delivery order. */
  outcomes: RecordUsageOutcome[];
  /** The new ledger entries, in delivery order, balance-after running per team from its locked balance. */
  debits: UsageDebit[];
  keyTotals: KeyUsageTotal[];
}

/**
 * Plans a delivered batch of usage: each usage id is debited once, whether it
 * was debited before (`alreadyDebited`, read under the teams' row locks) or
 * appears twice in the batch (a producer's relay re-published it). Usage of a
 * team that does not exist is skipped. Negative costs debit nothing.
 */
export function planUsageDebits(
  usages: UsageRecord[],
  lockedTeams: ReadonlyMap<string, Team>,
  alreadyDebited: ReadonlySet<string>,
  newId: () => string,
): UsageDebitPlan {
  const seen = new Set(alreadyDebited);
  const balances = new Map([...lockedTeams].map(([id, team]) => [id, team.balanceMicroCredits]));
  const keys = new Map<string, KeyUsageTotal>();
  const debits: UsageDebit[] = [];
  const outcomes = usages.map((usage): RecordUsageOutcome => {
    const balance = balances.get(usage.teamId);
    if (balance === undefined) return 'unknown_team';
    if (seen.has(usage.usageId)) return 'duplicate';
    seen.add(usage.usageId);
    const cost = usage.costMicroCredits > 0n ? usage.costMicroCredits : 0n;
    balances.set(usage.teamId, balance - cost);
    debits.push({
      id: newId(),
      teamId: usage.teamId,
      amountMicroCredits: -cost,
      balanceAfterMicroCredits: balance - cost,
      note: usage.model,
      usageId: usage.usageId,
      keyId: usage.keyId || null,
      createdAt: usage.occurredAt,
    });
    if (usage.keyId) addToKey(keys, usage, cost);
    return 'debited';
  });
  return { outcomes, debits, keyTotals: [...keys.values()] };
}

function addToKey(keys: Map<string, KeyUsageTotal>, usage: UsageRecord, cost: bigint): void {
  const total = keys.get(usage.keyId) ?? {
    keyId: usage.keyId,
    tokens: 0n,
    costMicroCredits: 0n,
    requests: 0n,
    lastUsedAt: usage.occurredAt,
  };
  total.tokens += usage.inputTokens + usage.outputTokens;
  total.costMicroCredits += cost;
  total.requests += 1n;
  if (usage.occurredAt > total.lastUsedAt) total.lastUsedAt = usage.occurredAt;
  keys.set(usage.keyId, total);
}
