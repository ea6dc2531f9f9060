import type { Pool, PoolClient } from 'pg';
import { inConsumerSpan, type EventEnvelope } from './envelope';
import { ident } from './pg';
import { listenWithReconnect } from './pg-listener';
import type { EventTransport, SubscribeOptions, Subscription } from './transport';

const CHANNEL = 'whetstone_events';
const BATCH = 200;
const FALLBACK_POLL_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;

/**
 * The embedded default's event transport: an append-only log table with
 * per-(group, topic) offsets, woken by LISTEN/NOTIFY, at-least-once and in
 * order per topic. A row lock on the offset keeps one consumer of a group
 * working a topic at a time, so several processes can share a group.
 */
export class PgEventLog implements EventTransport {
  private readonly s: string;
  private ready: Promise<void> | undefined;
  private readonly subscriptions = new Set<Subscription>();

  constructor(
    private readonly pool: Pool,
    schema = 'whetstone_events',
  ) {
    this.s = ident(schema);
  }

  /** Idempotent DDL; safe to run from every process at start. */
  ensureSchema(): Promise<void> {
    this.ready ??= (async () => {
      const c = await this.pool.connect();
      try {
        // Concurrent first starts would race on CREATE; serialise them.
        await c.query('SELECT pg_advisory_lock(hashtext($1))', [`${this.s}:ddl`]);
        await c.query(`CREATE SCHEMA IF NOT EXISTS ${this.s}`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${this.s}.log (
          seq BIGSERIAL PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          topic TEXT NOT NULL,
          key TEXT NOT NULL,
          type TEXT NOT NULL,
          payload BYTEA NOT NULL,
          headers JSONB NOT NULL DEFAULT '{}',
          occurred_at TIMESTAMPTZ NOT NULL,
          created_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
        await c.query(`CREATE INDEX IF NOT EXISTS log_topic_seq ON ${this.s}.log (topic, seq)`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${this.s}.consumer_offsets (
          grp TEXT NOT NULL, topic TEXT NOT NULL, seq BIGINT NOT NULL DEFAULT 0,
          updated_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (grp, topic))`);
      } finally {
        await c.query('SELECT pg_advisory_unlock(hashtext($1))', [`${this.s}:ddl`]).catch(() => undefined);
        c.release();
      }
    })();
    return this.ready;
  }

  async publish(events: EventEnvelope[]): Promise<void> {
    if (events.length === 0) return;
    await this.ensureSchema();
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      // Publishers of a topic take turns until they commit. Consumers read `seq > offset`, and a sequence
      // hands out numbers in the order transactions ask, not the order they commit: without the turn, a
      // publisher holding seq n that commits after another's n+1 was read is skipped for ever (seen as a
      // lost debit when the router and the orchestrator both publish billing usage). Sorted: no deadlock.
      for (const topic of [...new Set(events.map((e) => e.topic))].sort())
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.s}.log:${topic}`]);
      for (const e of events) {
        await c.query(
          `INSERT INTO ${this.s}.log (id, topic, key, type, payload, headers, occurred_at) VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (id) DO NOTHING`,
          [e.id, e.topic, e.key, e.type, Buffer.from(e.payload), JSON.stringify(e.headers), e.occurredAt],
        );
      }
      // The payload names the topics written, so only their subscribers wake (every process LISTENs on one channel).
      await c.query(`SELECT pg_notify($1, $2)`, [CHANNEL, [...new Set(events.map((e) => e.topic))].join(',')]);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    await this.ensureSchema();
    for (const topic of options.topics) {
      const start = options.fromLatest ? `(SELECT COALESCE(MAX(seq), 0) FROM ${this.s}.log WHERE topic = $2)` : '0';
      await this.pool.query(
        `INSERT INTO ${this.s}.consumer_offsets (grp, topic, seq) VALUES ($1, $2, ${start}) ON CONFLICT DO NOTHING`,
        [options.group, topic],
      );
    }

    let stopped = false;
    let wake: (() => void) | undefined;
    const nudge = () => wake?.();
    const ours = new Set(options.topics);
    // A lost LISTEN connection reconnects by itself; meanwhile the fallback poll keeps delivering, and
    // once it is back the loop looks at once for what was written while nobody listened.
    const listener = await listenWithReconnect({
      pool: this.pool,
      channel: CHANNEL,
      // An empty payload (an older publisher) wakes everyone; otherwise only a subscriber of a topic written.
      onNotify: (payload) => {
        if (!payload || payload.split(',').some((t) => ours.has(t))) nudge();
      },
      onReconnect: nudge,
      logger: options.logger,
    });

    const loop = (async () => {
      let backoff = 100;
      while (!stopped) {
        let delivered = 0;
        let failed = false;
        for (const topic of options.topics) {
          if (stopped) break;
          try {
            delivered += await this.drain(options, topic, () => stopped);
          } catch (err) {
            failed = true;
            options.logger.warn({ err, group: options.group, topic }, 'event handler failed; will redeliver');
          }
        }
        if (failed) {
          await sleep(backoff, (w) => (wake = w));
          backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
          continue;
        }
        backoff = 100;
        if (delivered === 0) await sleep(FALLBACK_POLL_MS, (w) => (wake = w));
      }
    })();

    const subscription: Subscription = {
      stop: async () => {
        if (stopped) return;
        stopped = true;
        nudge();
        await loop;
        await listener.stop();
        if (options.fromLatest) {
          await this.pool
            .query(`DELETE FROM ${this.s}.consumer_offsets WHERE grp = $1`, [options.group])
            .catch(() => undefined);
        }
        this.subscriptions.delete(subscription);
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Deliver one batch of a topic under the group's offset lock; returns how many were handled. */
  private async drain(options: SubscribeOptions, topic: string, isStopped: () => boolean): Promise<number> {
    const c: PoolClient = await this.pool.connect();
    let handled = 0;
    try {
      await c.query('BEGIN');
      const offset = await c.query<{ seq: string }>(
        `SELECT seq FROM ${this.s}.consumer_offsets WHERE grp = $1 AND topic = $2 FOR UPDATE SKIP LOCKED`,
        [options.group, topic],
      );
      if (offset.rowCount === 0) {
        await c.query('COMMIT');
        return 0; // another process of this group holds the topic right now
      }
      const rows = await c.query(
        `SELECT seq, id, topic, key, type, payload, headers, occurred_at FROM ${this.s}.log WHERE topic = $1 AND seq > $2 ORDER BY seq LIMIT ${BATCH}`,
        [topic, offset.rows[0]!.seq],
      );
      let last: string | undefined;
      const envelope = (row: (typeof rows.rows)[number]): EventEnvelope => ({
        id: row.id,
        topic: row.topic,
        key: row.key,
        type: row.type,
        payload: new Uint8Array(row.payload),
        headers: row.headers,
        occurredAt: row.occurred_at,
      });
      const batch = options.handleBatch;
      if (batch) {
        // The whole batch, then the offset past it; or nothing, and it is redelivered.
        if (rows.rows.length && !isStopped()) {
          const events = rows.rows.map(envelope);
          await inConsumerSpan(this.consumerOf(options), events, () => batch(events));
          await c.query(
            `UPDATE ${this.s}.consumer_offsets SET seq = $3, updated_at = now() WHERE grp = $1 AND topic = $2`,
            [options.group, topic, rows.rows[rows.rows.length - 1]!.seq],
          );
          handled = rows.rows.length;
        }
        await c.query('COMMIT');
        return handled;
      }
      const handler = options.handler!;
      try {
        for (const row of rows.rows) {
          if (isStopped()) break;
          const event = envelope(row);
          await inConsumerSpan(this.consumerOf(options), [event], () => handler(event));
          last = row.seq;
          handled++;
        }
      } finally {
        // Commit progress up to the last success, even when a later event failed.
        if (last !== undefined) {
          await c.query(
            `UPDATE ${this.s}.consumer_offsets SET seq = $3, updated_at = now() WHERE grp = $1 AND topic = $2`,
            [options.group, topic, last],
          );
        }
        await c.query('COMMIT');
      }
      return handled;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  private consumerOf(options: SubscribeOptions) {
    return { system: 'whetstone_pg_event_log', group: options.group };
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
  }
}

function sleep(ms: number, register: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    register(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
