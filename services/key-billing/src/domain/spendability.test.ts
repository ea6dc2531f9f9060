import { AppError } from '@whetstone/errors';
import type { Team } from './model';
import { MICRO_PER_CREDIT } from './money';
import { decideSpend } from './spendability';

const credits = (n: number) => BigInt(n) * MICRO_PER_CREDIT;

function team(overrides: Partial<Team> = {}): Team {
  return {
    id: 't1',
    name: 'team',
    ownerUserId: 'u1',
    plan: 'free',
    includedMicroCredits: 0n,
    overageEnabled: false,
    overageCeilingMicroCredits: 0n,
    paymentMethodVerified: false,
    blocked: false,
    blockedReason: '',
    balanceMicroCredits: credits(10),
    lastRenewedMonth: null,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    ...overrides,
  };
}

function denial(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a denial');
}

const none = { hasGrantedCredits: false };

describe('decideSpend', () => {
  it('when a free team has a positive balance, then it may spend without overage', () => {
    expect(decideSpend(team(), credits(1), false, none)).toEqual({ overage: false });
  });

  it('when a free team balance is zero, then it is 402 OUT_OF_CREDITS with a resolution url', () => {
    const err = denial(() => decideSpend(team({ balanceMicroCredits: 0n }), 0n, false, none));
    expect(err).toMatchObject({ kind: 'PaymentRequired', reason: 'OUT_OF_CREDITS' });
    expect(err.metadata.resolution_url).toBe('/dashboard#credits');
  });

  it('when a free team without granted credits calls a model directly, then it is 402 DIRECT_MODEL_REQUIRES_CREDITS', () => {
    expect(denial(() => decideSpend(team(), 0n, true, none))).toMatchObject({
      kind: 'PaymentRequired',
      reason: 'DIRECT_MODEL_REQUIRES_CREDITS',
    });
    expect(decideSpend(team(), 0n, true, { hasGrantedCredits: true })).toEqual({ overage: false });
  });

  it('when a paid team is past its included credits with overage disabled, then it is 402 OUT_OF_CREDITS', () => {
    const err = denial(() => decideSpend(team({ plan: 'paid', balanceMicroCredits: 0n }), credits(1), false, none));
    expect(err).toMatchObject({ kind: 'PaymentRequired', reason: 'OUT_OF_CREDITS' });
  });

  it('when a paid team draws overage below the ceiling, then it is allowed as overage', () => {
    const paid = team({
      plan: 'paid',
      overageEnabled: true,
      paymentMethodVerified: true,
      overageCeilingMicroCredits: credits(100),
      balanceMicroCredits: -credits(50),
    });
    expect(decideSpend(paid, credits(10), false, none)).toEqual({ overage: true });
  });

  it('when a paid team would cross its overage ceiling, then it is 403 CREDIT_CEILING_REACHED', () => {
    const paid = team({
      plan: 'paid',
      overageEnabled: true,
      paymentMethodVerified: true,
      overageCeilingMicroCredits: credits(100),
      balanceMicroCredits: -credits(95),
    });
    expect(denial(() => decideSpend(paid, credits(10), false, none))).toMatchObject({
      kind: 'PermissionDenied',
      reason: 'CREDIT_CEILING_REACHED',
    });
    expect(denial(() => decideSpend({ ...paid, balanceMicroCredits: -credits(100) }, 0n, false, none))).toMatchObject({
      reason: 'CREDIT_CEILING_REACHED',
    });
  });

  it('when overage is enabled but no payment method is verified, then it is 403 CARD_REQUIRED', () => {
    const paid = team({
      plan: 'paid',
      overageEnabled: true,
      overageCeilingMicroCredits: credits(100),
      balanceMicroCredits: 0n,
    });
    expect(denial(() => decideSpend(paid, 1n, false, none))).toMatchObject({
      kind: 'PermissionDenied',
      reason: 'CARD_REQUIRED',
    });
  });

  it('when the balance covers part of the request, then the request is allowed and flagged as overage', () => {
    expect(decideSpend(team({ plan: 'paid', balanceMicroCredits: credits(1) }), credits(2), false, none)).toEqual({
      overage: true,
    });
  });

  it('when the account is blocked, then it is Unauthenticated ACCOUNT_BLOCKED', () => {
    expect(denial(() => decideSpend(team({ blocked: true }), 0n, false, none))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'ACCOUNT_BLOCKED',
    });
  });
});
