import { MICRO_PER_CREDIT, formatCredits, parseCredits } from './money';
import { renewalAmounts } from './renewal';
import { billingMonthOf, startOfBillingMonth } from './billing-month';

const credits = (n: number) => BigInt(n) * MICRO_PER_CREDIT;

describe('renewalAmounts', () => {
  it('when overage was drawn, then it is invoiced and the balance is topped up to the included credits', () => {
    expect(renewalAmounts({ balanceMicroCredits: -credits(30), includedMicroCredits: credits(100) })).toEqual({
      overageInvoiced: credits(30),
      topUp: credits(100),
    });
  });

  it('when some included credits are left, then only the difference is added', () => {
    expect(renewalAmounts({ balanceMicroCredits: credits(40), includedMicroCredits: credits(100) })).toEqual({
      overageInvoiced: 0n,
      topUp: credits(60),
    });
  });

  it('when granted credits exceed the included amount, then they are kept and nothing is added', () => {
    expect(renewalAmounts({ balanceMicroCredits: credits(250), includedMicroCredits: credits(100) })).toEqual({
      overageInvoiced: 0n,
      topUp: 0n,
    });
  });
});

describe('money and months', () => {
  it('when credits are parsed, then decimals become exact micro-credits and junk is rejected', () => {
    expect(parseCredits('12')).toBe(credits(12));
    expect(parseCredits('0.000001')).toBe(1n);
    expect(parseCredits('-3.5')).toBe(-3_500_000n);
    expect(parseCredits('1e3')).toBeNull();
    expect(parseCredits('0.0000001')).toBeNull();
    expect(formatCredits(-3_500_000n)).toBe('-3.5');
    expect(formatCredits(credits(500))).toBe('500');
  });

  it('when a date is near a month boundary, then the UTC billing month is used', () => {
    expect(billingMonthOf(new Date('2026-11-30T23:59:59Z'))).toBe('2026-11');
    expect(billingMonthOf(new Date('2026-12-01T00:00:00Z'))).toBe('2026-12');
    expect(startOfBillingMonth(new Date('2026-11-22T13:00:00Z')).toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });
});
