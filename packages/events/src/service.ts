import { z } from 'zod';
import type { Logger } from '@whetstone/telemetry';
import type { Pool } from 'pg';
import { KafkaTransport } from './kafka';
import { startOutboxRelay, type OutboxRelay } from './outbox-relay';
import { pgPoolFromUrl } from './pg';
import { PgEventLog } from './pg-event-log';
import type { EventTransport } from './transport';

/**
 * The event variables every producing service reads, as one zod shape to
 * spread into its config schema: `z.object({ ...eventsEnv, PORT: ... })`.
 */
export const eventsEnv = {
  EVENTS_TRANSPORT: z.enum(['postgres', 'kafka']).default('postgres'),
  /** The event log's database; defaults to DATABASE_URL's server with schema `whetstone_events`. */
  EVENTS_DATABASE_URL: z.string().url().optional(),
  KAFKA_BROKERS: z.string().optional(),
};

export interface ServiceEventsConfig {
  DATABASE_URL: string;
  EVENTS_TRANSPORT: 'postgres' | 'kafka';
  EVENTS_DATABASE_URL?: string | undefined;
  KAFKA_BROKERS?: string | undefined;
}

export interface ServiceEvents {
  transport: EventTransport;
  /** The service's own pool (its schema), shared with whoever writes to the outbox with plain SQL. */
  own: { pool: Pool; schema: string };
  relay: OutboxRelay;
  /**
   * Readiness probes of the service's database and (on the Postgres transport) the event log's, for
   * createRpcServer's `dependencies`: each resolves while its server answers.
   */
  dependencies: Record<string, () => Promise<unknown>>;
  /** Ship what is left, stop the relay, close the transport and both pools. */
  close(): Promise<void>;
}

/**
 * One way to wire a service's events: the transport (Postgres event log or
 * Kafka), and the relay that ships the service's outbox to it.
 */
export function startServiceEvents(
  config: ServiceEventsConfig,
  options: { clientId: string; defaultSchema: string; logger: Logger },
): ServiceEvents {
  const own = pgPoolFromUrl(config.DATABASE_URL, 3);
  const schema = own.schema ?? options.defaultSchema;
  const eventsUrl = new URL(config.EVENTS_DATABASE_URL ?? config.DATABASE_URL);
  if (!config.EVENTS_DATABASE_URL) eventsUrl.searchParams.set('schema', 'whetstone_events');
  const eventsDb = config.EVENTS_TRANSPORT === 'kafka' ? null : pgPoolFromUrl(eventsUrl.toString(), 4);
  const transport: EventTransport = eventsDb
    ? new PgEventLog(eventsDb.pool, eventsDb.schema)
    : new KafkaTransport((config.KAFKA_BROKERS ?? '').split(',').filter(Boolean), options.clientId);
  const relay = startOutboxRelay({ pool: own.pool, schema, transport, logger: options.logger });
  return {
    transport,
    own: { pool: own.pool, schema },
    relay,
    dependencies: {
      postgres: () => own.pool.query('SELECT 1'),
      ...(eventsDb ? { 'event log': () => eventsDb.pool.query('SELECT 1') } : {}),
    },
    async close() {
      await relay.flush().catch(() => 0);
      await relay.stop();
      await transport.close();
      await Promise.all([own.pool.end(), eventsDb?.pool.end()]);
    },
  };
}
