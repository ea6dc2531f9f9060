import { Pool } from 'pg';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { ensureOutbox, PgEventLog, startOutboxRelay, type EventEnvelope } from '../src';

const logger = createLogger({ service: 'events-test', level: 'silent' });

describe('Postgres event log and outbox relay (real Postgres)', () => {
  let pool: Pool;
  let logSchema: TestSchema;
  let producer: TestSchema;
  let log: PgEventLog;

  beforeAll(async () => {
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 10 });
    logSchema = await createTestSchema('evlog');
    producer = await createTestSchema('producer');
    log = new PgEventLog(pool, logSchema.name);
    await ensureOutbox(pool, producer.name);
  });

  afterAll(async () => {
    await log.close();
    await logSchema.drop();
    await producer.drop();
    await pool.end();
  });

  const envelope = (id: string, topic = 't.v1', key = 'k'): EventEnvelope => ({
    id,
    topic,
    key,
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
    const sub = await log.subscribe({
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

  it('when events are published, then a group receives them in order with payload and headers intact', async () => {
    const topic = `order.${Date.now()}`;
    const { seen, sub } = await collect('g-order', [topic]);
    await log.publish([envelope(`${topic}-1`, topic), envelope(`${topic}-2`, topic)]);
    await log.publish([envelope(`${topic}-3`, topic)]);
    await eventually(async () => seen.length === 3);
    await sub.stop();
    expect(seen.map((e) => e.id)).toEqual([`${topic}-1`, `${topic}-2`, `${topic}-3`]);
    expect(new TextDecoder().decode(seen[0]!.payload)).toBe(`${topic}-1`);
    expect(seen[0]!.headers.traceparent).toMatch(/^00-/);
  });

  it('when the same event id is published twice, then it is stored once', async () => {
    const topic = `dup.${Date.now()}`;
    await log.publish([envelope(`${topic}-x`, topic)]);
    await log.publish([envelope(`${topic}-x`, topic)]);
    const { seen, sub } = await collect('g-dup', [topic]);
    await eventually(async () => seen.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    await sub.stop();
    expect(seen).toHaveLength(1);
  });

  it('when a handler fails once, then the event is delivered again and nothing after it is skipped', async () => {
    const topic = `retry.${Date.now()}`;
    const { seen, sub } = await collect('g-retry', [topic], { failFirst: true });
    await log.publish([envelope(`${topic}-1`, topic), envelope(`${topic}-2`, topic)]);
    await eventually(async () => seen.length === 2, 15_000);
    await sub.stop();
    expect(seen.map((e) => e.id)).toEqual([`${topic}-1`, `${topic}-2`]);
  });

  it('when two groups subscribe, then both get every event; a restarted consumer resumes from its offset', async () => {
    const topic = `groups.${Date.now()}`;
    const a = await collect('g-a', [topic]);
    const b = await collect('g-b', [topic]);
    await log.publish([envelope(`${topic}-1`, topic)]);
    await eventually(async () => a.seen.length === 1 && b.seen.length === 1);
    await a.sub.stop();
    await log.publish([envelope(`${topic}-2`, topic)]);
    const again = await collect('g-a', [topic]);
    await eventually(async () => again.seen.length === 1);
    await again.sub.stop();
    await b.sub.stop();
    expect(again.seen.map((e) => e.id)).toEqual([`${topic}-2`]);
  });

  it('when a subscriber starts from latest, then it sees only what is published after it', async () => {
    const topic = `latest.${Date.now()}`;
    await log.publish([envelope(`${topic}-old`, topic)]);
    const { seen, sub } = await collect(`g-latest-${process.pid}`, [topic], { fromLatest: true });
    await log.publish([envelope(`${topic}-new`, topic)]);
    await eventually(async () => seen.length === 1);
    await sub.stop();
    expect(seen.map((e) => e.id)).toEqual([`${topic}-new`]);
  });

  it('when outbox rows are written in a rolled-back and a committed transaction, then only the committed ones are relayed, each once', async () => {
    const topic = `outbox.${Date.now()}`;
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

    const relayA = startOutboxRelay({ pool, schema: producer.name, transport: log, logger, pollMs: 20 });
    const relayB = startOutboxRelay({ pool, schema: producer.name, transport: log, logger, pollMs: 20 });
    const { seen, sub } = await collect('g-outbox', [topic]);
    await eventually(async () => seen.length === 2);
    await new Promise((r) => setTimeout(r, 150));
    await Promise.all([relayA.stop(), relayB.stop(), sub.stop()]);
    expect(seen.map((e) => new TextDecoder().decode(e.payload))).toEqual(['one', 'two']);
    expect(seen[0]!.id).toMatch(new RegExp(`^${producer.name}/\\d+$`));
    const unsent = await pool.query(
      `SELECT count(*)::int AS n FROM "${producer.name}".outbox_events WHERE published_at IS NULL`,
    );
    expect(unsent.rows[0].n).toBe(0);
  });
});
