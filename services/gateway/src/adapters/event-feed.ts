import { createEventTransport, pgPoolFromUrl, type EventTransport } from '@whetstone/events';
import type { GatewayConfig } from '../config';

/** The keys.v1 feed: the shared Postgres event log by default, Kafka on Kubernetes; none when neither is configured. */
export function eventFeed(
  config: GatewayConfig,
): { transport: EventTransport; close: () => Promise<void> } | undefined {
  if (config.EVENTS_TRANSPORT === 'kafka') {
    const transport = createEventTransport({
      kind: 'kafka',
      brokers: (config.KAFKA_BROKERS ?? '').split(',').filter(Boolean),
      clientId: config.WHETSTONE_INSTANCE,
    });
    return { transport, close: () => transport.close() };
  }
  if (!config.EVENTS_DATABASE_URL) return undefined;
  const { pool } = pgPoolFromUrl(config.EVENTS_DATABASE_URL, 3);
  const transport = createEventTransport({ kind: 'postgres', pool });
  return {
    transport,
    close: async () => {
      await transport.close();
      await pool.end();
    },
  };
}
