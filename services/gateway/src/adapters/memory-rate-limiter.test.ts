import { DEFAULT_RATE_LIMITS, requestChecks } from '../domain/rate-limit';
import { MemoryRateLimiter } from './memory-rate-limiter';

describe('in-process rate limiter', () => {
  it('when a window is exhausted, then the in-process limiter denies with retry-after until the window ends', async () => {
    const limiter = new MemoryRateLimiter();
    const checks = requestChecks({ ...DEFAULT_RATE_LIMITS, generatePerMinute: 2 }, 'POST', '/generate', {
      ip: 'x',
      userId: 'u',
    });
    const t = 60_000 * 1000 + 15_000;
    expect(await limiter.consume(checks, t)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume(checks, t)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.consume(checks, t)).toMatchObject({ allowed: false, retryAfterSeconds: 45 });
    expect(await limiter.consume(checks, t + 45_000)).toMatchObject({ allowed: true });
  });
});
