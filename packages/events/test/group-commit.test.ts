import { Client, Pool } from 'pg';
import { AppError, Reasons } from '@whetstone/errors';
import { createLogger, Registry } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { ensureOutbox, GroupCommitOutbox, type GroupCommitOptions, type OutboxRow } from '../src';

const logger = createLogger({ service: 'group-commit-test', level: 'silent' });

const row = (key: string): OutboxRow => ({
  topic: 'billing.usage.v1',
  key,
  type: 'test.Usage',
  payload: new TextEncoder().encode(key),
  headers: {},
});

/** What a metric shows now: a counter's or gauge's value, or a histogram's count and max bucket reached. */
async function metric(registry: Registry, name: string): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return Number(m?.values.find((v) => !('metricName' in v) || v.metricName === name)?.value ?? 0);
}

async function histogram(registry: Registry, name: string): Promise<{ count: number; sum: number }> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name)!;
  const value = (suffix: string) =>
    Number(m.values.find((v) => (v as { metricName?: string }).metricName === `${name}${suffix}`)?.value ?? 0);
  return { count: value('_count'), sum: value('_sum') };
}

describe('GroupCommitOutbox (real Postgres)', () => {
  let pool: Pool;
  let schema: TestSchema;

  beforeAll(async () => {
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 6 });
    schema = await createTestSchema('groupcommit');
    await ensureOutbox(pool, schema.name);
  });

  afterAll(async () => {
    await schema.drop();
    await pool.end();
  });

  const table = () => `"${schema.name}".outbox_events`;
  const stored = async (keys: string[]) =>
    (
      await pool.query<{ key: string; n: number }>(
        `SELECT key, count(*)::int AS n FROM ${table()} WHERE key = ANY($1) GROUP BY key`,
        [keys],
      )
    ).rows;

  const writer = (options: Partial<GroupCommitOptions> = {}) => {
    const registry = new Registry();
    const outbox = new GroupCommitOutbox({
      pool,
      schema: schema.name,
      logger,
      metrics: { registry, prefix: 'test_outbox' },
      ...options,
    });
    return { outbox, registry };
  };

  /** Hold the outbox table locked from another session, so the next commit blocks until `release`. */
  async function lockTable(): Promise<{ release(): Promise<void> }> {
    const c = new Client({ connectionString: testDatabaseUrl() });
    await c.connect();
    await c.query('BEGIN');
    await c.query(`LOCK TABLE ${table()} IN ACCESS EXCLUSIVE MODE`);
    return {
      release: async () => {
        await c.query('COMMIT');
        await c.end();
      },
    };
  }

  /** Until a commit is blocked on that lock (the writer is busy; new appends queue behind it). */
  const commitBlocked = () =>
    eventually(async () => {
      const r = await pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`INSERT INTO "${schema.name}".outbox_events%`],
      );
      return r.rows[0].n > 0;
    });

  it('when many calls append at once, then each resolves with its rows already stored, once, in fewer commits than calls', async () => {
    const { outbox, registry } = writer();
    const keys = Array.from({ length: 200 }, (_, i) => `many-${Date.now()}-${i}`);
    const seenOnResolve = await Promise.all(
      keys.map(async (key) => {
        await outbox.append([row(key), row(key)]);
        return (await stored([key]))[0]?.n;
      }),
    );
    expect(seenOnResolve).toEqual(keys.map(() => 2));
    expect((await stored(keys)).every((r) => r.n === 2)).toBe(true);
    const batches = await histogram(registry, 'test_outbox_commit_batch_rows');
    expect(batches.sum).toBe(400);
    expect(batches.count).toBeLessThan(200);
    await outbox.close();
  });

  it('when the queue is full, then callers wait for room, and past the hard bound are refused with a retryable 503 and not written', async () => {
    const { outbox, registry } = writer({ maxQueuedRows: 4, maxWaiting: 2, maxWaitMs: 60_000 });
    const tag = `bp-${Date.now()}`;
    const lock = await lockTable();
    const first = outbox.append([row(`${tag}-0`)]);
    await commitBlocked();
    const queued = [1, 2, 3, 4].map((i) => outbox.append([row(`${tag}-${i}`)]));
    const waiting = [5, 6].map((i) => outbox.append([row(`${tag}-${i}`)]));
    const refused = await outbox.append([row(`${tag}-7`)]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ kind: 'Unavailable', reason: Reasons.OVERLOADED, retryAfterSeconds: 1 });
    expect(await metric(registry, 'test_outbox_queued_rows')).toBe(4);
    expect(await metric(registry, 'test_outbox_backpressure_waits_total')).toBe(2);
    expect(await metric(registry, 'test_outbox_backpressure_rejections_total')).toBe(1);

    await lock.release();
    await Promise.all([first, ...queued, ...waiting]);
    const keys = Array.from({ length: 8 }, (_, i) => `${tag}-${i}`);
    expect((await stored(keys)).map((r) => r.key).sort()).toEqual(keys.slice(0, 7));
    await outbox.close();
  });

  it('when a caller waits longer than maxWaitMs, then it is refused (503) and its rows are never written', async () => {
    const { outbox, registry } = writer({ maxQueuedRows: 1, maxWaitMs: 20 });
    const tag = `wait-${Date.now()}`;
    const lock = await lockTable();
    const first = outbox.append([row(`${tag}-0`)]);
    await commitBlocked();
    const second = outbox.append([row(`${tag}-1`)]);
    const timedOut = await outbox.append([row(`${tag}-2`)]).catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ reason: Reasons.OVERLOADED });
    await lock.release();
    await Promise.all([first, second]);
    expect((await stored([`${tag}-0`, `${tag}-1`, `${tag}-2`])).map((r) => r.key).sort()).toEqual([
      `${tag}-0`,
      `${tag}-1`,
    ]);
    expect(await metric(registry, 'test_outbox_backpressure_rejections_total')).toBe(1);
    await outbox.close();
  });

  it('when a commit fails, then its callers get a retryable 503 and the next commit still works', async () => {
    const broken = await createTestSchema('groupcommit_broken');
    const { outbox, registry } = writer({ schema: broken.name });
    const failed = await outbox.append([row('x')]).catch((e: unknown) => e);
    expect(failed).toMatchObject({ kind: 'Unavailable', reason: Reasons.DEPENDENCY_UNAVAILABLE, retryable: true });
    expect(await metric(registry, 'test_outbox_commit_failures_total')).toBe(1);
    await ensureOutbox(pool, broken.name);
    await outbox.append([row('y')]);
    expect((await pool.query(`SELECT key FROM "${broken.name}".outbox_events`)).rows).toEqual([{ key: 'y' }]);
    await outbox.close();
    await broken.drop();
  });

  it('when closed, then what was queued is committed and later appends are refused', async () => {
    const { outbox } = writer();
    const tag = `close-${Date.now()}`;
    const pending = outbox.append([row(tag)]);
    await outbox.close();
    await pending;
    expect(await stored([tag])).toEqual([{ key: tag, n: 1 }]);
    await expect(outbox.append([row(`${tag}-late`)])).rejects.toMatchObject({ reason: Reasons.OVERLOADED });
  });
});
