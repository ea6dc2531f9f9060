/**
 * What every EventTransport promises its producers and consumers, as one suite: events.test.ts runs it against
 * the Postgres event log, kafka.test.ts against a real one-node Kafka broker. What only one transport does (the
 * log's dedupe by event id) stays in that transport's file.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { ensureOutbox, startOutboxRelay, type EventEnvelope, type EventTransport } from '../src';

const logger = createLogger({ service: 'transport-contract', level: 'silent' });

export interface ContractTransport {
  transport: EventTransport;
  close(): Promise<void>;
}

/** Kafka groups and topics outlive a run: every name here is unique to the run. */
const unique = (prefix: string) => `${prefix}-${Date.now()}-${randomBytes(3).toString('hex')}`;

export function describeTransportContract(
  name: string,
  open: (pool: Pool) => Promise<ContractTransport>,
  /** How long to wait for a delivery: a Kafka group join and rebalance take seconds. */
  waitMs = 15_000,
): void {
  describe(`EventTransport contract: ${name}`, () => {
    let pool: Pool;
    let producer: TestSchema;
    let opened: ContractTransport;
    let transport: EventTransport;

    beforeAll(async () => {
      pool = new Pool({ connectionString: testDatabaseUrl(), max: 6 });
      producer = await createTestSchema('contract_producer');
      await ensureOutbox(pool, producer.name);
      opened = await open(pool);
      transport = opened.transport;
      // Kafka's first start may resolve the broker's jars through Maven first.
    }, 240_000);

    afterAll(async () => {
      await opened.close();
      await producer.drop();
      await pool.end();
    });

    const envelope = (id: string, topic: string): EventEnvelope => ({
      id,
      topic,
      key: 'aggregate-1',
      type: 'test.Event',
      payload: new TextEncoder().encode(id),
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      occurredAt: new Date(),
    });

    const collect = async (
      group: string,
      topics: string[],
      options: { failFirst?: boolean; fromLatest?: boolean } = {},
    ) => {
      const seen: EventEnvelope[] = [];
      let failed = false;
      const sub = await transport.subscribe({
        group,
        topics,
        logger,
        ...(options.fromLatest ? { fromLatest: true } : {}),
        handler: async (e) => {
          if (options.failFirst && !failed) {
            failed = true;
            throw new Error('transient');
          }
          seen.push(e);
        },
      });
      return { seen, sub };
    };

    it('when events are published, then a group receives them in order with id, type, key, payload and headers intact', async () => {
      const topic = unique('order');
      const { seen, sub } = await collect(unique('g'), [topic]);
      await transport.publish([envelope(`${topic}-1`, topic), envelope(`${topic}-2`, topic)]);
      await transport.publish([envelope(`${topic}-3`, topic)]);
      await eventually(async () => seen.length === 3, waitMs);
      await sub.stop();
      expect(seen.map((e) => e.id)).toEqual([`${topic}-1`, `${topic}-2`, `${topic}-3`]);
      expect(seen[0]).toMatchObject({ type: 'test.Event', key: 'aggregate-1', topic });
      expect(new TextDecoder().decode(seen[0]!.payload)).toBe(`${topic}-1`);
      expect(seen[0]!.headers.traceparent).toMatch(/^00-/);
    }, 60_000);

    it('when a handler fails once, then the event is delivered again and nothing after it is skipped', async () => {
      const topic = unique('retry');
      const { seen, sub } = await collect(unique('g'), [topic], { failFirst: true });
      await transport.publish([envelope(`${topic}-1`, topic), envelope(`${topic}-2`, topic)]);
      await eventually(async () => seen.length === 2, waitMs * 2);
      await sub.stop();
      expect(seen.map((e) => e.id)).toEqual([`${topic}-1`, `${topic}-2`]);
    }, 90_000);

    it('when two groups subscribe, then both get every event; a restarted consumer resumes after what it handled', async () => {
      const topic = unique('groups');
      const [ga, gb] = [unique('ga'), unique('gb')];
      const a = await collect(ga, [topic]);
      const b = await collect(gb, [topic]);
      await transport.publish([envelope(`${topic}-1`, topic)]);
      await eventually(async () => a.seen.length === 1 && b.seen.length === 1, waitMs);
      await a.sub.stop();
      await transport.publish([envelope(`${topic}-2`, topic)]);
      const again = await collect(ga, [topic]);
      await eventually(async () => again.seen.length === 1, waitMs);
      await again.sub.stop();
      await b.sub.stop();
      expect(again.seen.map((e) => e.id)).toEqual([`${topic}-2`]);
    }, 90_000);

    it('when a subscriber starts from latest, then it sees only what is published after it subscribed', async () => {
      const topic = unique('latest');
      await transport.publish([envelope(`${topic}-old`, topic)]);
      const { seen, sub } = await collect(unique('g'), [topic], { fromLatest: true });
      await transport.publish([envelope(`${topic}-new`, topic)]);
      await eventually(async () => seen.length === 1, waitMs);
      await sub.stop();
      expect(seen.map((e) => e.id)).toEqual([`${topic}-new`]);
    }, 60_000);

    it('when events wait for a batch consumer, then it gets them in batches, in order, each once', async () => {
      const topic = unique('batch');
      const ids = Array.from({ length: 30 }, (_, i) => `${topic}-${i}`);
      await transport.publish(ids.map((id) => envelope(id, topic)));
      const batches: string[][] = [];
      const sub = await transport.subscribe({
        group: unique('g'),
        topics: [topic],
        logger,
        handleBatch: async (events) => void batches.push(events.map((e) => e.id)),
      });
      await eventually(async () => batches.flat().length === 30, waitMs);
      await sub.stop();
      expect(batches.flat()).toEqual(ids);
      expect(batches.length).toBeLessThan(ids.length);
    }, 60_000);

    it('when a batch handler fails, then that whole batch is delivered again, not only the part after a failure', async () => {
      const topic = unique('batchfail');
      const ids = [1, 2, 3].map((i) => `${topic}-${i}`);
      await transport.publish(ids.map((id) => envelope(id, topic)));
      const calls: string[][] = [];
      const sub = await transport.subscribe({
        group: unique('g'),
        topics: [topic],
        logger,
        handleBatch: async (events) => {
          calls.push(events.map((e) => e.id));
          if (calls.length === 1) throw new Error('transient');
        },
      });
      await eventually(async () => calls.length >= 2 && calls.slice(1).flat().length >= calls[0]!.length, waitMs * 2);
      await sub.stop();
      expect(calls[1]!.slice(0, calls[0]!.length)).toEqual(calls[0]);
      expect([...new Set(calls.slice(1).flat())]).toEqual(ids);
    }, 90_000);

    it('when outbox rows are written in a rolled-back and a committed transaction, then only the committed ones are relayed, each once', async () => {
      const topic = unique('outbox');
      const insert = `INSERT INTO "${producer.name}".outbox_events (topic, key, type, payload) VALUES ($1, 'k', 'test.Event', $2)`;
      const c = await pool.connect();
      await c.query('BEGIN');
      await c.query(insert, [topic, Buffer.from('rolled back')]);
      await c.query('ROLLBACK');
      await c.query('BEGIN');
      await c.query(insert, [topic, Buffer.from('one')]);
      await c.query(insert, [topic, Buffer.from('two')]);
      await c.query('COMMIT');
      c.release();

      const relayA = startOutboxRelay({ pool, schema: producer.name, transport, logger, pollMs: 20 });
      const relayB = startOutboxRelay({ pool, schema: producer.name, transport, logger, pollMs: 20 });
      const { seen, sub } = await collect(unique('g'), [topic]);
      await eventually(async () => seen.length === 2, waitMs);
      await new Promise((r) => setTimeout(r, 150));
      await Promise.all([relayA.stop(), relayB.stop(), sub.stop()]);
      expect(seen.map((e) => new TextDecoder().decode(e.payload))).toEqual(['one', 'two']);
      expect(seen[0]!.id).toMatch(new RegExp(`^${producer.name}/\\d+$`));
      const unsent = await pool.query(
        `SELECT count(*)::int AS n FROM "${producer.name}".outbox_events WHERE published_at IS NULL AND topic = $1`,
        [topic],
      );
      expect(unsent.rows[0].n).toBe(0);
    }, 60_000);
  });
}
