import type { Pool } from 'pg';
import { KafkaTransport } from './kafka';
import { PgEventLog } from './pg-event-log';
import type { EventTransport } from './transport';

export * from './envelope';
export * from './transport';
export * from './pg';
export * from './pg-listener';
export * from './outbox-relay';
export * from './group-commit';
export * from './polling-worker';
export { PgEventLog } from './pg-event-log';
export { KafkaTransport, envelopeOf } from './kafka';

export type EventTransportConfig =
  { kind: 'postgres'; pool: Pool; schema?: string } | { kind: 'kafka'; brokers: string[]; clientId: string };

/** Pick the transport from configuration (`EVENTS_TRANSPORT`), never from the environment directly. */
export function createEventTransport(config: EventTransportConfig): EventTransport {
  return config.kind === 'kafka'
    ? new KafkaTransport(config.brokers, config.clientId)
    : new PgEventLog(config.pool, config.schema);
}
export * from './service';
export * from './topics';
