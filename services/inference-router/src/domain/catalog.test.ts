import { Restrictions, priceOf } from './catalog';

describe('priceOf', () => {
  it('charges the request fee plus every started 1,000 tokens', () => {
    const price = { perRequest: 1_000n, per1kInputTokens: 100n, per1kOutputTokens: 400n };
    expect(priceOf(price, 0)).toBe(1_000n);
    expect(priceOf(price, 1)).toBe(1_001n);
    expect(priceOf(price, 1_000)).toBe(1_100n);
    expect(priceOf(price, 2_500, 10)).toBe(1_000n + 250n + 4n);
  });
});

describe('Restrictions', () => {
  it('matches a team-specific pair or a wildcard', () => {
    const r = new Restrictions('team-a:m1, *:m2');
    expect(r.restricted('team-a', 'm1')).toBe(true);
    expect(r.restricted('team-b', 'm1')).toBe(false);
    expect(r.restricted('team-b', 'm2')).toBe(true);
  });
});
