/** What gateway replicas share through Redis when REDIS_URL is set: rate-limit counters and cache invalidations. */
import { Redis } from 'ioredis';
import type { Logger } from '@whetstone/telemetry';
import type { AuthCache, Invalidation } from '../application/auth-cache';
import type { GatewayConfig } from '../config';
import type { RateLimiter } from '../domain/rate-limit';
import { FailoverRateLimiter } from './failover-rate-limiter';
import { MemoryRateLimiter } from './memory-rate-limiter';
import { RedisRateLimiter } from './redis-rate-limiter';
import { redisInvalidation } from './redis-invalidation';

export interface SharedState {
  rateLimiter: RateLimiter;
  /** Tells the other replicas to drop a key or team from their auth caches; a no-op without Redis. */
  broadcast: (invalidation: Invalidation) => Promise<void>;
  usesRedis: boolean;
  /** Whether Redis is connected now; undefined without Redis. */
  redisUp(): boolean | undefined;
  close(): Promise<void>;
}

/** Without Redis, counters live in this process and there are no other replicas to tell. */
export async function connectSharedState(
  config: GatewayConfig,
  authCache: AuthCache,
  logger: Logger,
): Promise<SharedState> {
  if (!config.REDIS_URL)
    return {
      rateLimiter: new MemoryRateLimiter(),
      broadcast: async () => undefined,
      usesRedis: false,
      redisUp: () => undefined,
      close: async () => undefined,
    };
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
  const subscriber = redis.duplicate();
  // ioredis reconnects by itself; without a listener it prints every failed attempt to stderr, unbounded.
  // Through the logger, repeats are summarised (see @whetstone/telemetry).
  for (const client of [redis, subscriber])
    client.on('error', (err: Error) => logger.warn({ err }, 'Redis connection error; reconnecting'));
  const fanout = await redisInvalidation(redis, subscriber, (inv) => authCache.invalidate(inv), logger);
  const redisUp = () => redis.status === 'ready';
  return {
    // While Redis is away (a restart), counters are this process's own rather than every request a 503.
    rateLimiter: new FailoverRateLimiter(new RedisRateLimiter(redis, config.RATE_LIMIT_REDIS_PREFIX), redisUp, (err) =>
      logger.warn({ err }, 'Redis unavailable; rate limits counted in this process until it is back'),
    ),
    // The key is revoked in key-billing and dropped from this cache already, and key-billing's KeyRevoked
    // event reaches every replica through the event log: a failed fan-out only loses the shortcut.
    broadcast: async (invalidation) => {
      const lost = (err?: unknown) => logger.warn({ err }, 'Redis unavailable; invalidation left to the keys.v1 event');
      if (!redisUp()) return lost();
      await fanout.broadcast(invalidation).catch(lost);
    },
    usesRedis: true,
    redisUp,
    async close() {
      await fanout.close();
      subscriber.disconnect();
      redis.disconnect();
    },
  };
}
