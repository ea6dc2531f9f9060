import { create } from '@bufbuild/protobuf';
import { encodeEvent, Topics } from '@whetstone/events';
import { AccountBlockedSchema, KeyRevokedSchema } from '@whetstone/proto/keybilling/v1';
import type { KeyBillingEvent } from '../domain/model';
import type { EventOutbox } from '../domain/ports';
import type { Db } from './prisma.repositories';

/** The topic key-billing publishes on. */
export const KEYS_TOPIC = Topics.keys;

/** Proto-encode a domain event, with the active trace context. Keyed by team id so one team's events stay in order. */
export function toOutboxRow(event: KeyBillingEvent) {
  switch (event.type) {
    case 'KeyRevoked':
      return encodeEvent(
        KEYS_TOPIC,
        KeyRevokedSchema,
        create(KeyRevokedSchema, { keyId: event.keyId, teamId: event.teamId }),
        event.teamId,
      );
    case 'AccountBlocked':
      return encodeEvent(
        KEYS_TOPIC,
        AccountBlockedSchema,
        create(AccountBlockedSchema, { teamId: event.teamId, blocked: event.blocked }),
        event.teamId,
      );
  }
}

/** Writes events into `outbox_events` through the caller's transaction (the events package's relay ships them). */
export function prismaOutbox(db: Db): EventOutbox {
  return {
    async append(event) {
      const { topic, key, type, payload, headers } = toOutboxRow(event);
      await db.outboxEvent.create({ data: { topic, key, type, payload: Buffer.from(payload), headers } });
    },
  };
}
