import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Topics, type EventEnvelope } from '@whetstone/events';
import { UsageRecordedSchema } from '@whetstone/proto/inference/v1';
import { TrainingUsageRecordedSchema } from '@whetstone/proto/training/v1';
import { FREE_ALLOWANCE_MICRO } from '../../src/domain/money';
import { startHarness, type Harness } from './harness';

let seq = 0;
const envelope = (type: string, payload: Uint8Array, key: string): EventEnvelope => ({
  id: `e${++seq}`,
  topic: Topics.billingUsage,
  type,
  key,
  payload,
  headers: {},
  occurredAt: new Date(),
});

describe('TrainingUsageRecorded on billing.usage.v1 (real Postgres)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  async function teamWithKey() {
    const res = await h.client.signUp({
      email: `train${++seq}-${Date.now()}@example.com`,
      password: 'correct horse battery',
    });
    const { key } = await h.client.createApiKey({ teamId: res.team!.id, userId: res.user!.id, name: 'trainer' });
    return { teamId: res.team!.id, keyId: key!.id };
  }

  const training = (teamId: string, keyId: string, jobId: string) =>
    create(TrainingUsageRecordedSchema, {
      usageId: `training:${jobId}`,
      teamId,
      keyId,
      jobId,
      baseModel: 'whetstone-extract-base',
      exampleEpochs: 870n,
      costMicroCredits: 8_700n,
      occurredAt: timestampFromDate(new Date('2026-11-24T10:00:00Z')),
    });

  it('when the same training usage is delivered twice, then the team is debited once and the key gets cost, not tokens', async () => {
    const { teamId, keyId } = await teamWithKey();
    const event = training(teamId, keyId, '11111111-1111-4111-8111-111111111111');
    expect(await h.app.onTrainingUsageRecorded(event)).toBe('debited');
    expect(await h.app.onTrainingUsageRecorded(event)).toBe('duplicate');

    const usage = await h.client.getUsage({ teamId });
    expect(usage.account?.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO - 8_700n);
    expect(usage.recentEntries.filter((e) => e.usageId === event.usageId)).toEqual([
      expect.objectContaining({ note: 'training job 11111111-1111-4111-8111-111111111111 (whetstone-extract-base)' }),
    ]);
    expect(usage.keys[0]).toMatchObject({ id: keyId, usageTokens: 0n, usageCostMicroCredits: 8_700n });
  });

  it('when the topic delivers both usage types in one batch, then each is debited once by its usage id', async () => {
    const { teamId, keyId } = await teamWithKey();
    const job = training(teamId, keyId, '22222222-2222-4222-8222-222222222222');
    const inference = create(UsageRecordedSchema, {
      usageId: `inf-${teamId}`,
      teamId,
      keyId,
      model: 'whetstone-extract-base',
      inputTokens: 10n,
      costMicroCredits: 1_000n,
    });
    const batch = [
      envelope(TrainingUsageRecordedSchema.typeName, toBinary(TrainingUsageRecordedSchema, job), teamId),
      envelope(UsageRecordedSchema.typeName, toBinary(UsageRecordedSchema, inference), teamId),
      envelope(TrainingUsageRecordedSchema.typeName, toBinary(TrainingUsageRecordedSchema, job), teamId),
      envelope('whetstone.example.v1.Unknown', new Uint8Array(), teamId),
    ];
    expect(await h.app.onUsageEvents(batch)).toEqual(['debited', 'debited', 'duplicate']);
    const usage = await h.client.getUsage({ teamId });
    expect(usage.account?.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO - 9_700n);
  });
});
