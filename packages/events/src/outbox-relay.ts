import type { Pool } from 'pg';
import type { Logger } from '@whetstone/telemetry';
import { ident } from './pg';
import type { EventTransport } from './transport';

/**
 * THE outbox shape. Every producing service has this table in its own schema
 * and writes to it in the same transaction as its state change (with Prisma,
 * as a model mapped to `outbox_events`; see key-billing's schema).
 */
export const OUTBOX_DDL = (schema: string) => `
CREATE TABLE IF NOT EXISTS ${ident(schema)}.outbox_events (
  id BIGSERIAL PRIMARY KEY,
  topic TEXT NOT NULL,
  key TEXT NOT NULL,
  type TEXT NOT NULL,
  payload BYTEA NOT NULL,
  headers JSONB NOT NULL DEFAULT '{}',
  created_at TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  published_at TIMESTAMPTZ(3)
);
CREATE INDEX IF NOT EXISTS outbox_events_published_at_id_idx ON ${ident(schema)}.outbox_events (published_at, id);`;

/** Create the outbox table for a service that does not manage it with Prisma migrations. */
export async function ensureOutbox(pool: Pool, schema: string): Promise<void> {
  await pool.query(OUTBOX_DDL(schema));
}

/** One row to append, as `encodeEvent` returns it. */
export interface OutboxRow {
  topic: string;
  key: string;
  type: string;
  payload: Uint8Array;
  headers: Record<string, string>;
}

/**
 * Append rows with plain SQL through any pg client or pool (a transaction's
 * client when the rows must commit with a state change). Services on Prisma may
 * use their `outbox_events` model instead; the relay ships both the same way.
 */
export async function appendOutbox(db: Pick<Pool, 'query'>, schema: string, rows: OutboxRow[]): Promise<void> {
  if (!rows.length) return;
  const values: unknown[] = [];
  const tuples = rows.map((r, i) => {
    values.push(r.topic, r.key, r.type, Buffer.from(r.payload), JSON.stringify(r.headers));
    const o = i * 5;
    return `($${o + 1}, $${o + 2}, $${o + 3}, $${o + 4}, $${o + 5}::jsonb)`;
  });
  await db.query(
    `INSERT INTO ${ident(schema)}.outbox_events (topic, key, type, payload, headers) VALUES ${tuples.join(', ')}`,
    values,
  );
}

export interface OutboxRelayOptions {
  pool: Pool;
  /** The producer's schema, holding `outbox_events`. */
  schema: string;
  transport: EventTransport;
  logger: Logger;
  /** How often an idle relay looks for new rows. */
  pollMs?: number;
}

export interface OutboxRelay {
  /** Ship everything unsent now (tests and shutdown use it). */
  flush(): Promise<number>;
  stop(): Promise<void>;
}

const BATCH = 100;

/**
 * Ships unsent outbox rows, in id order, to the transport and marks them sent.
 * An advisory lock per schema keeps one active relay across replicas, so order
 * is preserved; a relay that crashes after publishing re-publishes, and the
 * event id (`<schema>/<row id>`) lets transports and consumers de-duplicate.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const table = `${ident(options.schema)}.outbox_events`;
  const lockKey = `whetstone-outbox:${options.schema}`;
  let stopped = false;
  let running: Promise<number> = Promise.resolve(0);
  let wake: (() => void) | undefined;

  const shipBatch = () => shipOutboxBatch(options, table, lockKey);

  const flush = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await shipBatch();
      total += n;
      if (n < BATCH) return total;
    }
  };

  const loop = async () => {
    let backoff = options.pollMs ?? 100;
    while (!stopped) {
      try {
        running = flush();
        await running;
        backoff = options.pollMs ?? 100;
      } catch (err) {
        options.logger.warn({ err, schema: options.schema }, 'outbox relay failed; retrying');
        backoff = Math.min(5_000, backoff * 2);
      }
      if (stopped) break;
      // Interruptible, so stop() never waits out a backoff.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoff);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  const looping = loop();

  return {
    flush: async () => {
      await running.catch(() => 0);
      return flush();
    },
    stop: async () => {
      stopped = true;
      wake?.();
      await looping;
    },
  };
}

/** One batch under the schema's advisory lock: publish the oldest unsent rows, then mark them sent; 0 when locked out. */
async function shipOutboxBatch(options: OutboxRelayOptions, table: string, lockKey: string): Promise<number> {
  const c = await options.pool.connect();
  try {
    const locked = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [lockKey]);
    if (!locked.rows[0]!.ok) return 0;
    try {
      const rows = await c.query(
        `SELECT id, topic, key, type, payload, headers, created_at FROM ${table} WHERE published_at IS NULL ORDER BY id LIMIT ${BATCH}`,
      );
      if (rows.rowCount === 0) return 0;
      await options.transport.publish(
        rows.rows.map((r) => ({
          id: `${options.schema}/${r.id}`,
          topic: r.topic,
          key: r.key,
          type: r.type,
          payload: new Uint8Array(r.payload),
          headers: r.headers ?? {},
          occurredAt: r.created_at,
        })),
      );
      await c.query(`UPDATE ${table} SET published_at = now() WHERE id = ANY($1::bigint[])`, [
        rows.rows.map((r) => r.id),
      ]);
      return rows.rowCount ?? 0;
    } finally {
      await c.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
    }
  } finally {
    c.release();
  }
}
