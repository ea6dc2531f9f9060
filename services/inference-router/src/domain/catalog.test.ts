import { atPercent, Restrictions, priceOf, upstreamEntry, type UpstreamModelSpec } from './catalog';

describe('priceOf', () => {
  const price = {
    perRequest: 1_000n,
    per1kInputTokens: 100n,
    per1kOutputTokens: 400n,
    per1kCacheReadTokens: 10n,
    per1kCacheWriteTokens: 125n,
  };

  it('when tokens are given, then it charges the request fee plus every started 1,000 tokens', () => {
    expect(priceOf(price, {})).toBe(1_000n);
    expect(priceOf(price, { inputTokens: 1 })).toBe(1_001n);
    expect(priceOf(price, { inputTokens: 1_000 })).toBe(1_100n);
    expect(priceOf(price, { inputTokens: 2_500, outputTokens: 10 })).toBe(1_000n + 250n + 4n);
  });

  it('when input is split by cache class, then each class is charged at its own rate', () => {
    const usage = { inputTokens: 1_000, cacheReadTokens: 10_000, cacheWriteTokens: 2_000, outputTokens: 1_000 };
    expect(priceOf(price, usage)).toBe(1_000n + 100n + 100n + 250n + 400n);
  });
});

describe('atPercent', () => {
  it('when a cost is taken at a percent, then it rounds to the nearest micro-credit, and 100 leaves it', () => {
    expect(atPercent(1001n, 50)).toBe(501n);
    expect(atPercent(1000n, 50)).toBe(500n);
    expect(atPercent(7n, 100)).toBe(7n);
    expect(atPercent(7n)).toBe(7n);
    expect(atPercent(1000n, 0)).toBe(0n);
    expect(atPercent(1000n, 12.5)).toBe(125n);
  });
});

describe('upstreamEntry', () => {
  const provider = { name: 'acme', kind: 'anthropic' as const, host: 'api.acme.test', models: [] };
  const model = (family: UpstreamModelSpec['family'], explicit = {}): UpstreamModelSpec => ({
    id: 'm',
    upstreamModel: 'm-1',
    family,
    minCacheableTokens: 1024,
    defaultMaxTokens: 4096,
    price: { perRequest: 0n, per1kInput: 3_000n, per1kOutput: 15_000n, ...explicit },
  });

  it('when no cache prices are given, then the family multipliers of the input rate apply', () => {
    const rates = (family: UpstreamModelSpec['family']) => {
      const p = upstreamEntry(provider, model(family)).price;
      return [p.per1kCacheReadTokens, p.per1kCacheWriteTokens];
    };
    expect(rates('claude')).toEqual([300n, 3_750n]);
    expect(rates('gpt-4')).toEqual([1_500n, 3_000n]);
    expect(rates('gpt-5')).toEqual([300n, 3_000n]);
  });

  it('when cache prices are given, then they win, and the entry is an on-demand decoder of its provider', () => {
    const entry = upstreamEntry(provider, model('claude', { per1kCacheRead: 7n, per1kCacheWrite: 9n }));
    expect([entry.price.per1kCacheReadTokens, entry.price.per1kCacheWriteTokens]).toEqual([7n, 9n]);
    expect(entry).toMatchObject({
      task: 'decoder',
      provider: 'anthropic',
      supportsInference: true,
      supportsOnDemandInference: true,
      supportsTraining: false,
      upstream: { provider: 'acme', model: 'm-1', minCacheableTokens: 1024 },
    });
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
