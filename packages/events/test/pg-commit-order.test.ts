import { Pool, type PoolClient } from 'pg';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { PgEventLog, type EventEnvelope } from '../src';

const logger = createLogger({ service: 'pg-commit-order-test', level: 'silent' });

/**
 * A pool whose clients hold their next COMMIT until released: a publisher that took its sequence
 * number first but commits last, as a busy process does.
 */
function slowCommitPool(connectionString: string) {
  const pool = new Pool({ connectionString, max: 2 });
  let hold: { reached: () => void; released: Promise<void> } | undefined;
  const wrapped = {
    query: pool.query.bind(pool),
    connect: async (): Promise<PoolClient> => {
      const client = await pool.connect();
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = async (...args: unknown[]) => {
        const current = hold;
        if (args[0] === 'COMMIT' && current) {
          hold = undefined;
          current.reached();
          await current.released;
        }
        return query(...args);
      };
      return client;
    },
  } as unknown as Pool;
  return {
    pool: wrapped,
    /** The next COMMIT waits; resolves `reached` when it gets there, and goes on when `release` is called. */
    holdNextCommit() {
      let reached!: () => void;
      let release!: () => void;
      const atCommit = new Promise<void>((r) => (reached = r));
      hold = { reached, released: new Promise<void>((r) => (release = r)) };
      return { atCommit, release };
    },
    end: () => pool.end(),
  };
}

describe('Postgres event log: publishers that commit out of order (real Postgres)', () => {
  let pool: Pool;
  let slow: ReturnType<typeof slowCommitPool>;
  let logSchema: TestSchema;

  beforeAll(async () => {
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 6 });
    logSchema = await createTestSchema('evorder');
    slow = slowCommitPool(logSchema.serverUrl);
  });

  afterAll(async () => {
    await logSchema.drop();
    await slow.end();
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

  it('when a publisher commits after a later one was consumed, then its event is still delivered', async () => {
    const topic = `order.${Date.now()}`;
    const consumerLog = new PgEventLog(pool, logSchema.name);
    const slowLog = new PgEventLog(slow.pool, logSchema.name);
    const fastLog = new PgEventLog(pool, logSchema.name);
    // Their DDL first: CREATE INDEX IF NOT EXISTS would wait for the open transaction and hide the race.
    await Promise.all([consumerLog.ensureSchema(), slowLog.ensureSchema(), fastLog.ensureSchema()]);
    const delivered: string[] = [];
    const sub = await consumerLog.subscribe({
      group: 'g-order',
      topics: [topic],
      logger,
      handler: async (e) => void delivered.push(e.id),
    });

    const { atCommit, release } = slow.holdNextCommit();
    try {
      const first = slowLog.publish([envelope('first', topic)]);
      await atCommit; // "first" has its row (and sequence number), not yet committed
      const second = fastLog.publish([envelope('second', topic)]);
      // Long enough for the consumer (woken by NOTIFY, or its 1 s poll) to read whatever is committed.
      await new Promise((r) => setTimeout(r, 1_500));
      release();
      await Promise.all([first, second]);
      await eventually(async () => delivered.length >= 2, 5_000).catch(() => undefined);
    } finally {
      release();
      await sub.stop();
    }
    expect(delivered).toEqual(['first', 'second']);
  });
});
