import { create, toBinary } from '@bufbuild/protobuf';
import { AccountBlockedSchema, KeyRevokedSchema } from '@whetstone/proto/src/gen/whetstone/keybilling/v1/events_pb';
import type { KeyBillingEvent } from '../domain/model';
import type { EventOutbox } from '../domain/ports';
import type { Db } from './prisma.repositories';

/** The topic key-billing publishes on. */
export const KEYS_TOPIC = 'keys.v1';

/** Proto-encode a domain event. Keyed by team id so one team's events stay in order. */
export function encodeEvent(event: KeyBillingEvent): { topic: string; key: string; type: string; payload: Uint8Array } {
  switch (event.type) {
    case 'KeyRevoked':
      return {
        topic: KEYS_TOPIC,
        key: event.teamId,
        type: KeyRevokedSchema.typeName,
        payload: toBinary(KeyRevokedSchema, create(KeyRevokedSchema, { keyId: event.keyId, teamId: event.teamId })),
      };
    case 'AccountBlocked':
      return {
        topic: KEYS_TOPIC,
        key: event.teamId,
        type: AccountBlockedSchema.typeName,
        payload: toBinary(AccountBlockedSchema, create(AccountBlockedSchema, { teamId: event.teamId, blocked: event.blocked })),
      };
  }
}

/** Writes events into `outbox_events` through the caller's transaction. */
export function prismaOutbox(db: Db): EventOutbox {
  return {
    async append(event) {
      const { topic, key, type, payload } = encodeEvent(event);
      await db.outboxEvent.create({ data: { topic, key, type, payload: Buffer.from(payload) } });
    },
  };
}
