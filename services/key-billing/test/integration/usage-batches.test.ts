import { create, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Pool } from 'pg';
import { PgEventLog, Topics, type EventEnvelope, type Subscription } from '@whetstone/events';
import { UsageRecordedSchema } from '@whetstone/proto/inference/v1';
import { TrainingUsageRecordedSchema } from '@whetstone/proto/training/v1';
import { createLogger } from '@whetstone/telemetry';
import { createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { FREE_ALLOWANCE_MICRO } from '../../src/domain/money';
import { startUsageConsumer, USAGE_CONSUMER } from '../../src/transport/events/usage-recorded.consumer';
import { startHarness, type Harness } from './harness';

const logger = createLogger({ service: 'usage-batches-test', level: 'silent' });

/**
 * The usage consumer exactly as main.ts starts it, on the Postgres event log:
 * whole batches, one ledger transaction each, every usage id debited once
 * however often it is delivered.
 */
describe('usage consumed in batches from the event log (real Postgres)', () => {
  let h: Harness;
  let pool: Pool;
  let logSchema: TestSchema;
  let log: PgEventLog;
  let consumer: Subscription;
  let seq = 0;
  const published: { usageId: string; cost: bigint }[] = [];

  beforeAll(async () => {
    h = await startHarness();
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 4 });
    logSchema = await createTestSchema('kb_usage_log');
    log = new PgEventLog(pool, logSchema.name);
  });

  afterAll(async () => {
    await consumer?.stop();
    await log.close();
    await logSchema.drop();
    await pool.end();
    await h.close();
  });

  async function teamWithKey() {
    const res = await h.client.signUp({ email: `batch${++seq}-${Date.now()}@example.com`, password: 'correct horse' });
    const { key } = await h.client.createApiKey({ teamId: res.team!.id, userId: res.user!.id, name: 'k' });
    return { teamId: res.team!.id, keyId: key!.id };
  }

  /** An event as the router's or the orchestrator's relay publishes it: a fresh event id every time. */
  function event<D extends DescMessage>(schema: D, message: MessageShape<D>, key: string): EventEnvelope {
    return {
      id: `relay/${++seq}`,
      topic: Topics.billingUsage,
      type: schema.typeName,
      key,
      payload: toBinary(schema, message),
      headers: {},
      occurredAt: new Date(),
    };
  }

  const inference = (teamId: string, keyId: string, usageId: string, cost: bigint) => {
    published.push({ usageId, cost });
    return event(
      UsageRecordedSchema,
      create(UsageRecordedSchema, {
        usageId,
        teamId,
        keyId,
        model: 'whetstone-extract-base',
        inputTokens: 10n,
        outputTokens: 2n,
        costMicroCredits: cost,
        occurredAt: timestampFromDate(new Date()),
      }),
      teamId,
    );
  };

  const training = (teamId: string, keyId: string, jobId: string, cost: bigint) => {
    published.push({ usageId: `training:${jobId}`, cost });
    return event(
      TrainingUsageRecordedSchema,
      create(TrainingUsageRecordedSchema, {
        usageId: `training:${jobId}`,
        teamId,
        keyId,
        jobId,
        baseModel: 'whetstone-extract-base',
        exampleEpochs: 100n,
        costMicroCredits: cost,
      }),
      teamId,
    );
  };

  const ledger = async (teamIds: string[]) =>
    (
      await h.db.prisma.$queryRawUnsafe<{ usage_id: string; amount: bigint; tx: string }[]>(
        `SELECT usage_id, amount_micro_credits AS amount, xmin::text AS tx FROM "${h.db.schema.name}".ledger_entries
         WHERE team_id = ANY($1::uuid[]) AND kind = 'usage'`,
        teamIds,
      )
    ).map((r) => ({ ...r, amount: BigInt(r.amount) }));

  const balance = async (teamId: string) =>
    (await h.db.prisma.team.findUniqueOrThrow({ where: { id: teamId } })).balanceMicroCredits;

  it('when a batch mixes inference and training usage of two teams with repeated ids, then it is ONE ledger transaction and each id is debited once', async () => {
    const a = await teamWithKey();
    const b = await teamWithKey();
    const batch: EventEnvelope[] = [];
    for (let i = 0; i < 15; i++) batch.push(inference(a.teamId, a.keyId, `a-${i}-${a.teamId}`, 1_000n));
    for (let i = 0; i < 15; i++) batch.push(inference(b.teamId, b.keyId, `b-${i}-${b.teamId}`, 2_000n));
    batch.push(training(a.teamId, a.keyId, '33333333-3333-4333-8333-333333333333', 50_000n));
    // A relay that crashed after publishing sends the same usage again under new event ids.
    batch.push(
      inference(a.teamId, a.keyId, `a-0-${a.teamId}`, 1_000n),
      inference(b.teamId, b.keyId, `b-3-${b.teamId}`, 2_000n),
    );
    batch.push(training(a.teamId, a.keyId, '33333333-3333-4333-8333-333333333333', 50_000n));
    await log.publish(batch);
    consumer = await startUsageConsumer(log, h.app, logger);

    await eventually(async () => (await ledger([a.teamId, b.teamId])).length === 31);
    const rows = await ledger([a.teamId, b.teamId]);
    expect(new Set(rows.map((r) => r.usage_id)).size).toBe(31);
    expect(new Set(rows.map((r) => r.tx)).size).toBe(1);
    expect(await balance(a.teamId)).toBe(FREE_ALLOWANCE_MICRO - 15n * 1_000n - 50_000n);
    expect(await balance(b.teamId)).toBe(FREE_ALLOWANCE_MICRO - 15n * 2_000n);
    const keys = (await h.client.getUsage({ teamId: a.teamId })).keys;
    expect(keys[0]).toMatchObject({ requestCount: 16n, usageTokens: 15n * 12n, usageCostMicroCredits: 65_000n });
  });

  it('when the whole log is delivered again with new usage after it, then only the new usage is debited and history reconciles with the ledger', async () => {
    const c = await teamWithKey();
    await pool.query(`UPDATE "${logSchema.name}".consumer_offsets SET seq = 0 WHERE grp = $1`, [USAGE_CONSUMER]);
    await log.publish([
      inference(c.teamId, c.keyId, `c-new-${c.teamId}`, 7_000n),
      inference(c.teamId, c.keyId, `c-new-${c.teamId}`, 7_000n),
    ]);
    await eventually(async () => (await ledger([c.teamId])).length === 1);
    const offset = async () =>
      (
        await pool.query<{ seq: string }>(`SELECT seq FROM "${logSchema.name}".consumer_offsets WHERE grp = $1`, [
          USAGE_CONSUMER,
        ])
      ).rows[0]!.seq;
    const end = (await pool.query<{ seq: string }>(`SELECT max(seq)::text AS seq FROM "${logSchema.name}".log`))
      .rows[0]!.seq;
    await eventually(async () => (await offset()) === end);

    // Reconcile: every distinct usage id published has exactly one debit of its cost, nothing else is debited.
    const teams = (await h.db.prisma.team.findMany({ select: { id: true } })).map((t) => t.id);
    const rows = await ledger(teams);
    const expected = new Map(published.map((p) => [p.usageId, -p.cost]));
    expect(new Map(rows.map((r) => [r.usage_id, r.amount]))).toEqual(expected);
    expect(rows).toHaveLength(expected.size);
    for (const teamId of teams) {
      const sum = await h.db.prisma.ledgerEntry.aggregate({ where: { teamId }, _sum: { amountMicroCredits: true } });
      expect(await balance(teamId)).toBe(sum._sum.amountMicroCredits ?? 0n);
    }
  });
});
