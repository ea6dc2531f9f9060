/**
 * The system on Kafka, as the chart runs it (EVENTS_TRANSPORT=kafka, KAFKA_BROKERS; charts/whetstone/values.yaml):
 * a one-node KRaft broker from Maven Central's jars (@whetstone/testing's startKafkaBroker) and `pnpm start`'s
 * processes. One journey (train → deploy → infer → history and billing), then the broker is SIGKILLed under load and
 * started again: no acknowledged inference may lose its history record or its debit, or be debited twice. The
 * figures go to docs/reliability.md ("Kafka broker killed under load").
 */
import { eventually } from '@whetstone/testing';
import { startKafkaBroker, type KafkaBroker } from '@whetstone/testing/src/kafka-broker';
import {
  accountingSettled,
  deployToProject,
  eventLogRows,
  inferOnce,
  loadUntil,
  statusCounts,
  trainSmallJob,
  type Outcome,
} from './infra-helpers';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

const CONCURRENCY = 4;
/** Load before the kill, the broker's time down, and load after it is back. */
const BEFORE_KILL_MS = 5_000;
const DOWN_MS = 5_000;
const AFTER_RESTART_MS = 10_000;

describe('the system on a real Kafka broker (EVENTS_TRANSPORT=kafka, pnpm start)', () => {
  let broker: KafkaBroker;
  let system: RunningSystem;
  let key: string;
  let teamId: string;
  const api = apiClient(
    () => system.baseUrl,
    () => key,
  );

  beforeAll(async () => {
    broker = await startKafkaBroker();
    system = await startSystem({
      env: {
        EVENTS_TRANSPORT: 'kafka',
        KAFKA_BROKERS: broker.brokers,
        TRAINER_LEASE_SECONDS: '5',
        RATE_LIMIT_INFERENCE_PER_MINUTE: '1000000',
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
      },
    });
    ({ key, teamId } = await eventually(() => signUpWithKey(system.baseUrl, 'kafka').catch(() => null), 60_000, 2_000));
  }, 400_000);

  afterAll(async () => {
    await system?.stop();
    await broker?.stop();
  }, 90_000);

  it('when a job is trained, deployed and called, then history and billing get every inference once, through Kafka', async () => {
    const jobId = await trainSmallJob(api, 'kafka-train');
    const projectId = await deployToProject(api, jobId, 'kafka-ner');
    // deployments.v1 reached the orchestrator: the job is marked deployed.
    await api.until(jobId, ['deployed'], 30_000);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.post(`/projects/${projectId}/inference`, { text: 'Grace Hopper worked at Harvard.' });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { inference_id: string }).inference_id);
    }
    // inferences.v1 reached inference-history, billing.usage.v1 reached key-billing: one record and one debit each.
    const settled = await accountingSettled(system.databaseUrl!, teamId, ids, 30_000);
    expect(settled).toMatchObject({ records: 5, debits: 5, duplicates: 0 });
    const page = (await (await api.get(`/inferences?limit=50`)).json()) as { data: { id: string }[] };
    expect(page.data.map((r) => r.id)).toEqual(expect.arrayContaining(ids));
    const usage = (await (await api.get('/billing/usage')).json()) as {
      recent_entries: { kind: string; usage_id: string | null }[];
    };
    const debited = usage.recent_entries.filter((e) => e.kind === 'usage').map((e) => e.usage_id);
    expect(debited).toEqual(expect.arrayContaining([...ids, `training:${jobId}`]));
    // Nothing travelled through the Postgres event log.
    expect(await eventLogRows(system.databaseUrl!)).toBe(0);
  }, 420_000);

  it('when the broker is SIGKILLed under load and started again, then no event is lost, consumers catch up, and each inference is debited once', async () => {
    expect((await inferOnce(system.baseUrl, key)).status).toBe(200);
    const outcomes: Outcome[] = [];
    let stopLoad = false;
    const load = loadUntil(
      () => inferOnce(system.baseUrl, key),
      CONCURRENCY,
      () => stopLoad,
      outcomes,
    );
    let killedAt = 0;
    let restartedAt = 0;
    try {
      await new Promise((r) => setTimeout(r, BEFORE_KILL_MS));
      killedAt = Date.now();
      await broker.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, DOWN_MS));
      await broker.restart();
      restartedAt = Date.now();
      await new Promise((r) => setTimeout(r, AFTER_RESTART_MS));
    } finally {
      stopLoad = true;
      await load;
    }
    const loadEndedAt = Date.now();
    const acknowledged = outcomes.flatMap((o) => (o.inferenceId ? [o.inferenceId] : []));
    const settled = await accountingSettled(system.databaseUrl!, teamId, acknowledged, 120_000);
    const report = {
      sent: outcomes.length,
      acknowledged: acknowledged.length,
      acknowledgedWhileDown: outcomes.filter((o) => o.inferenceId && o.doneAt >= killedAt && o.sentAt <= restartedAt)
        .length,
      statuses: statusCounts(outcomes),
      brokerRestartSeconds: (restartedAt - killedAt - DOWN_MS) / 1000,
      records: settled.records,
      debits: settled.debits,
      duplicates: settled.duplicates,
      lost: acknowledged.length - Math.min(settled.records, settled.debits),
      caughtUpSecondsAfterRestart: Math.max(0, settled.settledAt - restartedAt) / 1000,
      caughtUpSecondsAfterLoad: Math.max(0, settled.settledAt - loadEndedAt) / 1000,
    };
    process.stdout.write(`kafka broker kill -9 under load: ${JSON.stringify(report)}\n`);
    expect(report).toMatchObject({ lost: 0, duplicates: 0 });
    expect(settled.debits).toBe(acknowledged.length);
    expect(settled.records).toBe(acknowledged.length);
    expect(acknowledged.length).toBeGreaterThan(0);
  }, 300_000);
});
