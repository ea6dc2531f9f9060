import type { Redis } from 'ioredis';
import { counterKey, type LimitCheck, type LimitDecision, type RateLimiter } from '../domain/rate-limit';
import { summarize } from './memory-rate-limiter';

/**
 * All-or-nothing consumption of several fixed-window counters in one atomic
 * script, so concurrent gateway replicas never over-admit.
 * KEYS: counter keys. ARGV: limit_1, ttl_ms_1, limit_2, ttl_ms_2, …
 * Returns {0, index} when counter `index` (1-based) is exhausted, else {1, count_1, count_2, …}.
 */
const CONSUME = `
local n = #KEYS
local counts = {}
for i = 1, n do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  if c + 1 > tonumber(ARGV[2 * i - 1]) then
    return {0, i}
  end
  counts[i] = c
end
local out = {1}
for i = 1, n do
  local c = redis.call('INCR', KEYS[i])
  if c == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i]) end
  out[i + 1] = c
end
return out
`;

/** Decrement each counter that still exists and is above zero (an expired window has nothing to give back). */
const RELEASE = `
for i = 1, #KEYS do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  if c > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`;

type WithConsume = Redis & {
  whetstoneConsume(numKeys: number, ...args: string[]): Promise<number[]>;
  whetstoneRelease(numKeys: number, ...keys: string[]): Promise<number>;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: WithConsume;

  constructor(
    redis: Redis,
    private readonly prefix = 'whetstone:',
  ) {
    // defineCommand sends EVALSHA (the script body only once per connection), not EVAL every request.
    if (!('whetstoneConsume' in redis)) redis.defineCommand('whetstoneConsume', { lua: CONSUME });
    if (!('whetstoneRelease' in redis)) redis.defineCommand('whetstoneRelease', { lua: RELEASE });
    this.redis = redis as WithConsume;
  }

  async consume(checks: LimitCheck[], now: number): Promise<LimitDecision> {
    const slots = checks.map((check) => ({ check, ...counterKey(check, now) }));
    const keys = slots.map((s) => this.prefix + s.key);
    // Keep a counter a little past its window so clock skew between replicas cannot reset it early.
    const args = slots.flatMap((s) => [String(s.check.rule.limit), String(s.windowEndsAt - now + 5_000)]);
    const result = await this.redis.whetstoneConsume(keys.length, ...keys, ...args);
    if (result[0] === 0) {
      const blocked = slots[Number(result[1]) - 1]!;
      return {
        allowed: false,
        check: blocked.check,
        retryAfterSeconds: Math.max(1, Math.ceil((blocked.windowEndsAt - now) / 1000)),
      };
    }
    return summarize(
      slots.map((s, i) => ({ limit: s.check.rule.limit, count: Number(result[i + 1]), windowEndsAt: s.windowEndsAt })),
      now,
    );
  }

  async release(checks: LimitCheck[], at: number): Promise<void> {
    const keys = checks.map((check) => this.prefix + counterKey(check, at).key);
    if (keys.length) await this.redis.whetstoneRelease(keys.length, ...keys);
  }
}
