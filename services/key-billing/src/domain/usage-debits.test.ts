import type { Team, UsageRecord } from './model';
import { planUsageDebits } from './usage-debits';

const team = (id: string, balance: bigint): Team => ({
  id,
  name: id,
  ownerUserId: 'u',
  plan: 'free',
  includedMicroCredits: 0n,
  overageEnabled: false,
  overageCeilingMicroCredits: 0n,
  paymentMethodVerified: false,
  blocked: false,
  blockedReason: '',
  balanceMicroCredits: balance,
  lastRenewedMonth: null,
  createdAt: new Date(0),
});

const usage = (usageId: string, teamId: string, cost: bigint, keyId = '', at = 0): UsageRecord => ({
  usageId,
  teamId,
  keyId,
  model: 'm',
  inputTokens: 2n,
  outputTokens: 1n,
  costMicroCredits: cost,
  occurredAt: new Date(at),
});

let n = 0;
const ids = () => `entry-${++n}`;

describe('planUsageDebits', () => {
  const teams = new Map([
    ['a', team('a', 100n)],
    ['b', team('b', 10n)],
  ]);

  it('when a batch repeats a usage id or carries one already debited, then each id is debited once', () => {
    const plan = planUsageDebits(
      [usage('u1', 'a', 5n), usage('u2', 'a', 7n), usage('u1', 'a', 5n), usage('old', 'a', 9n)],
      teams,
      new Set(['old']),
      ids,
    );
    expect(plan.outcomes).toEqual(['debited', 'debited', 'duplicate', 'duplicate']);
    expect(plan.debits.map((d) => d.usageId)).toEqual(['u1', 'u2']);
  });

  it('when two teams share a batch, then balance-after runs per team from its locked balance, and may go below zero', () => {
    const plan = planUsageDebits(
      [usage('x1', 'a', 30n), usage('y1', 'b', 8n), usage('x2', 'a', 20n), usage('y2', 'b', 8n)],
      teams,
      new Set(),
      ids,
    );
    expect(plan.debits.map((d) => [d.teamId, d.amountMicroCredits, d.balanceAfterMicroCredits])).toEqual([
      ['a', -30n, 70n],
      ['b', -8n, 2n],
      ['a', -20n, 50n],
      ['b', -8n, -6n],
    ]);
  });

  it('when a team is unknown or a cost is negative, then the first is skipped and the second debits nothing', () => {
    const plan = planUsageDebits([usage('g', 'ghost', 5n), usage('neg', 'a', -5n)], teams, new Set(), ids);
    expect(plan.outcomes).toEqual(['unknown_team', 'debited']);
    expect(plan.debits[0]).toMatchObject({ amountMicroCredits: -0n, balanceAfterMicroCredits: 100n });
  });

  it("when a key is used several times, then its totals add up and last-used is the batch's latest", () => {
    const plan = planUsageDebits(
      [usage('k1', 'a', 3n, 'key', 2000), usage('k2', 'a', 4n, 'key', 1000), usage('k3', 'a', 1n)],
      teams,
      new Set(),
      ids,
    );
    expect(plan.keyTotals).toEqual([
      { keyId: 'key', tokens: 6n, costMicroCredits: 7n, requests: 2n, lastUsedAt: new Date(2000) },
    ]);
    expect(plan.debits.map((d) => d.keyId)).toEqual(['key', 'key', null]);
  });
});
