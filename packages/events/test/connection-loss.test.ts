import type { Pool } from 'pg';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, withClient, type TestSchema } from '@whetstone/testing';
import { PgEventLog, listenWithReconnect, pgPoolFromUrl, type EventEnvelope } from '../src';

const logger = createLogger({ service: 'events-test', level: 'silent' });

/** Cut every connection of this pool's application name, as a database restart does (57P01 on each). */
const terminate = (applicationName: string) =>
  withClient(testDatabaseUrl(), (c) =>
    c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationName]),
  );

function namedPool(applicationName: string): Pool {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('application_name', applicationName);
  return pgPoolFromUrl(url.toString(), 4).pool;
}

describe('losing the database connection (real Postgres)', () => {
  let schema: TestSchema;
  const pools: Pool[] = [];
  const pool = (name: string) => {
    const p = namedPool(`${name}_${schema.name}`);
    pools.push(p);
    return p;
  };

  beforeAll(async () => {
    schema = await createTestSchema('connloss');
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await schema.drop();
  });

  it('when a checked-out client is cut between queries, then nothing crashes and the pool serves the next query', async () => {
    const p = pool('checkedout');
    const client = await p.connect();
    await client.query('SELECT 1');
    await terminate(`checkedout_${schema.name}`);
    // The 57P01 arrives as an 'error' event on the idle, checked-out client: unhandled, it would kill jest's worker.
    await new Promise((r) => setTimeout(r, 300));
    await expect(client.query('SELECT 1')).rejects.toThrow();
    client.release(true);
    await expect(p.query('SELECT 1 AS ok')).resolves.toMatchObject({ rows: [{ ok: 1 }] });
  });

  it('when the LISTEN connection is cut, then it reconnects by itself and notifications arrive again', async () => {
    const p = pool('listener');
    const channel = `ch_${schema.name}`;
    const heard: string[] = [];
    let reconnects = 0;
    const listener = await listenWithReconnect({
      pool: p,
      channel,
      onNotify: (payload) => heard.push(payload),
      onReconnect: () => reconnects++,
      logger,
    });
    try {
      await p.query('SELECT pg_notify($1, $2)', [channel, 'before']);
      await eventually(async () => heard.includes('before'));

      await terminate(`listener_${schema.name}`);
      await eventually(async () => reconnects === 1 && listener.connected, 10_000);
      await p.query('SELECT pg_notify($1, $2)', [channel, 'after']);
      await eventually(async () => heard.includes('after'));
    } finally {
      await listener.stop();
    }
  });

  it('when every connection of a subscriber is cut mid-stream, then it keeps delivering what is published afterwards', async () => {
    const p = pool('eventlog');
    const log = new PgEventLog(p, schema.name);
    const seen: string[] = [];
    const sub = await log.subscribe({
      group: 'g',
      topics: ['t.v1'],
      logger,
      handler: async (e) => void seen.push(e.id),
    });
    const envelope = (id: string): EventEnvelope => ({
      id,
      topic: 't.v1',
      key: 'k',
      type: 'test.Event',
      payload: new Uint8Array([1]),
      headers: {},
      occurredAt: new Date(),
    });
    try {
      await log.publish([envelope('e1')]);
      await eventually(async () => seen.includes('e1'));
      await terminate(`eventlog_${schema.name}`);
      // A pooled connection cut a moment ago can fail one publish; producers (the outbox relay) retry.
      await eventually(() => log.publish([envelope('e2')]).then(() => true));
      await eventually(async () => seen.includes('e2'), 10_000);
      expect(seen).toEqual(['e1', 'e2']);
    } finally {
      await sub.stop();
    }
  });
});
