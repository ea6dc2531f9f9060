import { decodeEvent, type EventEnvelope, Topics } from '@whetstone/events';
import { AccountBlockedSchema, KeyRevokedSchema } from '@whetstone/proto/keybilling/v1';
import type { AuthCache } from '../../application/auth-cache';

export const KEYS_TOPIC = Topics.keys;

/** keys.v1 → drop cached authentications of a revoked key or a blocked team, on this replica. */
export function keysConsumer(cache: AuthCache): (event: EventEnvelope) => Promise<void> {
  return async (event) => {
    const revoked = decodeEvent(event, KeyRevokedSchema);
    if (revoked) {
      cache.invalidate({ keyId: revoked.keyId });
      return;
    }
    const blocked = decodeEvent(event, AccountBlockedSchema);
    if (blocked) cache.invalidate({ teamId: blocked.teamId });
  };
}
