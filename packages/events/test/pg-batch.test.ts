import { Pool } from 'pg';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { PgEventLog, type EventEnvelope } from '../src';

const logger = createLogger({ service: 'pg-batch-test', level: 'silent' });

describe('Postgres event log batch consumption (real Postgres)', () => {
  let pool: Pool;
  let logSchema: TestSchema;
  let log: PgEventLog;

  beforeAll(async () => {
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 6 });
    logSchema = await createTestSchema('evbatch');
    log = new PgEventLog(pool, logSchema.name);
  });

  afterAll(async () => {
    await log.close();
    await logSchema.drop();
    await pool.end();
  });

  const envelope = (id: string, topic: string): EventEnvelope => ({
    id,
    topic,
    key: 'k',
    type: 'test.Event',
    payload: new TextEncoder().encode(id),
    headers: {},
    occurredAt: new Date(),
  });

  it('when events are already on the log, then a batch consumer gets them together, in order, and each once', async () => {
    const topic = `batch.${Date.now()}`;
    const ids = Array.from({ length: 30 }, (_, i) => `${topic}-${i}`);
    await log.publish(ids.map((id) => envelope(id, topic)));
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

  it('when a batch handler fails, then the whole batch is delivered again, not the part after a failure', async () => {
    const topic = `batchfail.${Date.now()}`;
    const ids = [1, 2, 3].map((i) => `${topic}-${i}`);
    await log.publish(ids.map((id) => envelope(id, topic)));
    const calls: string[][] = [];
    const sub = await log.subscribe({
      group: 'g-batchfail',
      topics: [topic],
      logger,
      handleBatch: async (events) => {
        calls.push(events.map((e) => e.id));
        if (calls.length === 1) throw new Error('transient');
      },
    });
    await eventually(async () => calls.length === 2);
    await sub.stop();
    expect(calls).toEqual([ids, ids]);
  });
});
