import { Pool } from 'pg';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { PgEventLog, type EventEnvelope } from '../src';
import { describeTransportContract } from './transport.contract';

const logger = createLogger({ service: 'events-test', level: 'silent' });

// The contract every transport keeps, against the Postgres event log (kafka.test.ts runs it against Kafka).
describeTransportContract('Postgres event log (real Postgres)', async (pool) => {
  const schema = await createTestSchema('evlog');
  const log = new PgEventLog(pool, schema.name);
  return {
    transport: log,
    close: async () => {
      await log.close();
      await schema.drop();
    },
  };
});

describe('Postgres event log: what only it does', () => {
  let pool: Pool;
  let logSchema: TestSchema;
  let log: PgEventLog;

  beforeAll(async () => {
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 4 });
    logSchema = await createTestSchema('evlog_only');
    log = new PgEventLog(pool, logSchema.name);
  });

  afterAll(async () => {
    await log.close();
    await logSchema.drop();
    await pool.end();
  });

  it('when the same event id is published twice, then it is stored once', async () => {
    const topic = `dup.${Date.now()}`;
    const envelope: EventEnvelope = {
      id: `${topic}-x`,
      topic,
      key: 'k',
      type: 'test.Event',
      payload: new Uint8Array([1]),
      headers: {},
      occurredAt: new Date(),
    };
    await log.publish([envelope]);
    await log.publish([envelope]);
    const seen: EventEnvelope[] = [];
    const sub = await log.subscribe({
      group: 'g-dup',
      topics: [topic],
      logger,
      handler: async (e) => void seen.push(e),
    });
    await eventually(async () => seen.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    await sub.stop();
    expect(seen).toHaveLength(1);
  });

  it('when 30 events wait on the log, then a batch consumer gets them in one batch', async () => {
    const topic = `batch.${Date.now()}`;
    const ids = Array.from({ length: 30 }, (_, i) => `${topic}-${i}`);
    await log.publish(
      ids.map((id) => ({
        id,
        topic,
        key: 'k',
        type: 'test.Event',
        payload: new Uint8Array(),
        headers: {},
        occurredAt: new Date(),
      })),
    );
    const batches: string[][] = [];
    const sub = await log.subscribe({
      group: 'g-batch',
      topics: [topic],
      logger,
      handleBatch: async (events) => void batches.push(events.map((e) => e.id)),
    });
    await eventually(async () => batches.flat().length === 30);
    await sub.stop();
    expect(batches).toEqual([ids]);
  });
});
