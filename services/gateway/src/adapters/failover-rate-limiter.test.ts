import { DEFAULT_RATE_LIMITS, requestChecks, type LimitCheck, type RateLimiter } from '../domain/rate-limit';
import { FailoverRateLimiter } from './failover-rate-limiter';
import { MemoryRateLimiter } from './memory-rate-limiter';

/** A shared store that can be switched off: consume fails as ioredis does with Redis gone. */
class SwitchableStore implements RateLimiter {
  up = true;
  readonly counters = new MemoryRateLimiter();
  released = 0;
  async consume(checks: LimitCheck[], now: number) {
    if (!this.up) throw new Error('Connection is closed.');
    return this.counters.consume(checks, now);
  }
  async release(checks: LimitCheck[], at: number) {
    this.released++;
    return this.counters.release(checks, at);
  }
}

const checks = () =>
  requestChecks({ ...DEFAULT_RATE_LIMITS, generatePerMinute: 2 }, 'POST', '/generate', { ip: 'x', userId: 'u' });
const t = 60_000 * 1000 + 15_000;

describe('failover rate limiter', () => {
  it('when the shared store is up, then its counters decide', async () => {
    const store = new SwitchableStore();
    const limiter = new FailoverRateLimiter(
      store,
      () => true,
      () => undefined,
    );
    await limiter.consume(checks(), t);
    await limiter.consume(checks(), t);
    expect(await limiter.consume(checks(), t)).toMatchObject({ allowed: false });
    expect(await store.counters.consume(checks(), t)).toMatchObject({ allowed: false });
  });

  it('when the shared store loses its connection mid-call, then the request is limited in-process instead of failing', async () => {
    const store = new SwitchableStore();
    const failovers: unknown[] = [];
    const limiter = new FailoverRateLimiter(
      store,
      () => true,
      (err) => failovers.push(err),
    );
    store.up = false;
    expect(await limiter.consume(checks(), t)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume(checks(), t)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.consume(checks(), t)).toMatchObject({ allowed: false, retryAfterSeconds: 45 });
    expect(failovers).toHaveLength(3);
  });

  it('when the shared store is known to be down, then it is not called, and a give-back goes to the counters that took it', async () => {
    const store = new SwitchableStore();
    let up = false;
    const limiter = new FailoverRateLimiter(
      store,
      () => up,
      () => undefined,
    );
    const local = checks();
    await limiter.consume(local, t);
    await limiter.consume(checks(), t);
    await limiter.release(local, t);
    expect(store.released).toBe(0);
    expect(await limiter.consume(checks(), t)).toMatchObject({ allowed: true, remaining: 0 });

    up = true;
    const shared = checks();
    await limiter.consume(shared, t);
    await limiter.release(shared, t);
    expect(store.released).toBe(1);
  });

  it('when the shared store fails for another reason, then the error is not hidden', async () => {
    const broken: RateLimiter = {
      consume: async () => {
        throw new Error('ERR unknown command');
      },
      release: async () => undefined,
    };
    const limiter = new FailoverRateLimiter(
      broken,
      () => true,
      () => undefined,
    );
    await expect(limiter.consume(checks(), t)).rejects.toThrow('ERR unknown command');
  });
});
