import type { Redis } from 'ioredis';
import type { Logger } from '@whetstone/telemetry';
import type { Invalidation } from '../application/auth-cache';

const CHANNEL = 'whetstone:keys.v1:invalidate';

/**
 * Fan-out of auth-cache invalidations between gateway replicas over Redis
 * pub/sub: the replica that revokes a key tells the others at once.
 */
export async function redisInvalidation(
  publisher: Redis,
  subscriber: Redis,
  onInvalidate: (invalidation: Invalidation) => void,
  logger: Logger,
): Promise<{ broadcast: (invalidation: Invalidation) => Promise<void>; close: () => Promise<void> }> {
  await subscriber.subscribe(CHANNEL);
  subscriber.on('message', (channel: string, message: string) => {
    if (channel !== CHANNEL) return;
    try {
      const parsed = JSON.parse(message) as Invalidation;
      onInvalidate({
        ...(parsed.keyId ? { keyId: String(parsed.keyId) } : {}),
        ...(parsed.teamId ? { teamId: String(parsed.teamId) } : {}),
      });
    } catch (err) {
      logger.warn({ err }, 'ignoring a malformed invalidation message');
    }
  });
  return {
    broadcast: async (invalidation) => {
      await publisher.publish(CHANNEL, JSON.stringify(invalidation));
    },
    close: async () => {
      await subscriber.unsubscribe(CHANNEL);
    },
  };
}
