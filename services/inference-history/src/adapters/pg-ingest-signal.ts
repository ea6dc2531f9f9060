import type { Pool } from 'pg';
import { listenWithReconnect } from '@whetstone/events';
import type { Logger } from '@whetstone/telemetry';
import type { IngestSignal } from '../application/ports';

/** The channel replicas tell each other on which inference ids they have just stored. */
export const INGESTED_CHANNEL = 'whetstone_history_ingested';
/** NOTIFY payloads are limited to 8,000 bytes: 150 ids of 37 bytes fit with room to spare. */
const IDS_PER_NOTIFY = 150;

/**
 * Wakes waiting reads on every replica: this process's reads at once, the
 * others through a Postgres NOTIFY that each replica LISTENs to. Without it a
 * read on a replica whose consumer is not the one that stored the id would wait
 * out its bound (the event log lets one replica consume at a time; Kafka splits
 * partitions between them).
 */
export async function pgIngestSignal(
  pool: Pool,
  local: IngestSignal,
  logger: Pick<Logger, 'warn' | 'info'>,
): Promise<IngestSignal & { stop(): Promise<void> }> {
  // A lost LISTEN connection reconnects by itself; meanwhile reads fall back to their bounded wait.
  const listener = await listenWithReconnect({
    pool,
    channel: INGESTED_CHANNEL,
    onNotify: (payload) => {
      if (payload) local.ingested(payload.split(','));
    },
    logger,
  });
  return {
    expect: (id) => local.expect(id),
    ingested(ids) {
      local.ingested(ids);
      for (let i = 0; i < ids.length; i += IDS_PER_NOTIFY)
        pool
          .query('SELECT pg_notify($1, $2)', [INGESTED_CHANNEL, ids.slice(i, i + IDS_PER_NOTIFY).join(',')])
          .catch((err: unknown) => logger.warn({ err }, 'could not tell other replicas about stored inferences'));
    },
    stop: () => listener.stop(),
  };
}
