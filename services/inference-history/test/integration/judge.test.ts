import { randomUUID } from 'node:crypto';
import { AppError } from '@whetstone/errors';
import { createLogger } from '@whetstone/telemetry';
import { inProcessIngestSignal } from '../../src/adapters/ingest-signal';
import { prismaHistoryStore } from '../../src/adapters/prisma-history-store';
import { prismaJudgeStore } from '../../src/adapters/prisma-judge-store';
import { buildApp, type HistoryApp } from '../../src/app';
import type { HistoryDeps } from '../../src/application/deps';
import { getInference } from '../../src/application/get-inference';
import { judgePending, type JudgeWorkerDeps } from '../../src/application/judge-pending';
import { getJudgeSettings, setJudgeSettings } from '../../src/application/judge-settings';
import { listInferences } from '../../src/application/list-inferences';
import type { Judge, JudgeStore } from '../../src/application/ports';
import { createHistoryDatabase } from '../factories/database';
import { completed, envelopeOf } from '../factories/events';

const TEAM = '5b0f3c1e-0000-4000-8000-000000000001';
const OTHER = '5b0f3c1e-0000-4000-8000-000000000002';
const logger = createLogger({ service: 'history-judge-test', level: 'silent' });

const fixedJudge = (score: number): Judge => ({
  kind: 'builtin',
  judge: async () => ({ score, rationale: `fixed ${score}`, kind: 'builtin', model: 'test-judge/1' }),
});

describe('the judge queue and settings against real Postgres', () => {
  let db: Awaited<ReturnType<typeof createHistoryDatabase>>;
  let deps: HistoryDeps;
  let judgeStore: JudgeStore;
  let app: HistoryApp;
  const worker = (judge: Judge | undefined, maxAttempts = 3): JudgeWorkerDeps => ({
    store: judgeStore,
    judges: judge ? { builtin: judge } : {},
    now: () => new Date(),
    logger,
    maxAttempts,
    leaseMs: 60_000,
    batch: 50,
  });
  const enable = (projectId: string, sampleRate = 1, teamId = TEAM) =>
    setJudgeSettings(judgeStore, () => new Date(), teamId, {
      projectId,
      enabled: true,
      sampleRate,
      kind: 'builtin',
      judgeModel: '',
    });
  const ingest = async (projectId: string, teamId = TEAM) => {
    const event = completed({ projectId, teamId });
    await app.onInferenceEvents([envelopeOf(event)]);
    return event.inferenceId;
  };
  const row = (id: string) => db.prisma.inferenceRecord.findUniqueOrThrow({ where: { id } });
  /** Drains the queue of records due now (other tests' records included; each test checks its own). */
  const drain = async (w: JudgeWorkerDeps) => {
    while ((await judgePending(w)) > 0);
  };

  beforeAll(async () => {
    db = await createHistoryDatabase('histjudge');
    judgeStore = prismaJudgeStore(db.prisma);
    deps = {
      store: prismaHistoryStore(db.prisma),
      signal: inProcessIngestSignal(),
      now: () => new Date(),
      readWaitMs: 0,
      inFlightWindowMs: 30_000,
    };
    app = buildApp({ ...deps, judgeStore, logger });
  });
  afterAll(() => db.close());

  it('when a project never configured is read, then judging is off; when set, then the settings read back', async () => {
    const project = randomUUID();
    expect(await getJudgeSettings(judgeStore, TEAM, project)).toMatchObject({ enabled: false, sampleRate: 0 });
    await enable(project, 0.25);
    expect(await getJudgeSettings(judgeStore, TEAM, project)).toMatchObject({
      projectId: project,
      enabled: true,
      sampleRate: 0.25,
      kind: 'builtin',
    });
    expect(await getJudgeSettings(judgeStore, OTHER, project)).toMatchObject({ enabled: false });
  });

  it('when settings are out of range or of an unknown kind, then 422 names every bad field', async () => {
    const err = await setJudgeSettings(judgeStore, () => new Date(), TEAM, {
      projectId: randomUUID(),
      enabled: true,
      sampleRate: 1.5,
      kind: 'oracle',
      judgeModel: 'x'.repeat(201),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('InvalidArgument');
    expect((err as AppError).fieldErrors.map((f) => f.field).sort()).toEqual(['judge_model', 'kind', 'sample_rate']);
  });

  it('when the llm judge is chosen with a model, then it is stored with the model', async () => {
    const projectId = randomUUID();
    await setJudgeSettings(judgeStore, () => new Date(), TEAM, {
      projectId,
      enabled: true,
      sampleRate: 0.5,
      kind: 'llm',
      judgeModel: ' gpt-judge ',
    });
    expect(await getJudgeSettings(judgeStore, TEAM, projectId)).toMatchObject({ kind: 'llm', judgeModel: 'gpt-judge' });
  });

  it('when records are stored, then only those of an enabled project of that team are queued', async () => {
    const judged = randomUUID();
    const unjudged = randomUUID();
    await enable(judged, 1);
    const queued = await ingest(judged);
    const otherProject = await ingest(unjudged);
    const otherTeam = await ingest(judged, OTHER);
    const noProject = await ingest('');
    expect((await row(queued)).judgeStatus).toBe('pending');
    for (const id of [otherProject, otherTeam, noProject]) expect((await row(id)).judgeStatus).toBeNull();
  });

  it('when the sample rate is 0, then nothing is queued; at 0.5, then some but not all of 200 records are', async () => {
    const none = randomUUID();
    const half = randomUUID();
    await enable(none, 0);
    await enable(half, 0.5);
    const ids = await Promise.all(Array.from({ length: 5 }, () => ingest(none)));
    for (const id of ids) expect((await row(id)).judgeStatus).toBeNull();
    const events = Array.from({ length: 200 }, () => completed({ projectId: half, teamId: TEAM }));
    await app.onInferenceEvents(events.map(envelopeOf));
    const pending = await db.prisma.inferenceRecord.count({ where: { projectId: half, judgeStatus: 'pending' } });
    expect(pending).toBeGreaterThan(50);
    expect(pending).toBeLessThan(150);
  });

  it('when the worker judges a queued record, then score, rationale, kind and model are on it and the score filter finds it', async () => {
    const project = randomUUID();
    await enable(project, 1);
    const id = await ingest(project);
    await drain(worker(fixedJudge(0.8125)));
    const record = await getInference(deps, TEAM, id);
    expect(record.llmajScore).toBe(0.8125);
    expect(record.judge).toMatchObject({
      status: 'scored',
      rationale: 'fixed 0.8125',
      kind: 'builtin',
      model: 'test-judge/1',
      error: null,
    });
    expect(record.judge?.judgedAt).toBeInstanceOf(Date);
    const page = await listInferences(deps, TEAM, { limit: 10, offset: 0, projectId: project, llmajScoreMin: 0.8 });
    expect(page.records.map((r) => r.inferenceId)).toEqual([id]);
    const none = await listInferences(deps, TEAM, { limit: 10, offset: 0, projectId: project, llmajScoreMin: 0.9 });
    expect(none.records).toEqual([]);
  });

  it('when the judge keeps failing with a retryable error, then it is retried later and failed after the last attempt', async () => {
    const project = randomUUID();
    await enable(project, 1);
    const id = await ingest(project);
    const failing: Judge = {
      kind: 'builtin',
      judge: async () => {
        throw new AppError('Unavailable', 'DEPENDENCY_UNAVAILABLE', 'The router is down.');
      },
    };
    await judgePending(worker(failing, 2));
    let r = await row(id);
    expect(r).toMatchObject({ judgeStatus: 'pending', judgeAttempts: 1 });
    expect(r.judgeError).toBe('DEPENDENCY_UNAVAILABLE: The router is down.');
    expect(r.judgeNextAt!.getTime()).toBeGreaterThan(Date.now());
    await db.prisma.inferenceRecord.update({ where: { id }, data: { judgeNextAt: new Date(Date.now() - 1) } });
    await judgePending(worker(failing, 2));
    r = await row(id);
    expect(r).toMatchObject({ judgeStatus: 'failed', judgeAttempts: 2, llmajScore: null });
    expect((await getInference(deps, TEAM, id)).judge).toMatchObject({
      status: 'failed',
      error: 'DEPENDENCY_UNAVAILABLE: The router is down.',
    });
  });

  it('when no judge of the project kind runs here, then the record fails at once with JUDGE_UNAVAILABLE', async () => {
    const project = randomUUID();
    await enable(project, 1);
    const id = await ingest(project);
    await drain(worker(undefined));
    expect(await row(id)).toMatchObject({ judgeStatus: 'failed', judgeAttempts: 1 });
    expect((await row(id)).judgeError).toMatch(/^JUDGE_UNAVAILABLE: /);
  });

  it('when two workers claim at once, then no record is claimed twice; when a claim lapses, then it is claimable again', async () => {
    const project = randomUUID();
    await enable(project, 1);
    const ids = await Promise.all(Array.from({ length: 6 }, () => ingest(project)));
    const [a, b] = await Promise.all([judgeStore.claim(50, 60_000), judgeStore.claim(50, 60_000)]);
    const mine = (c: typeof a) => c.map((x) => x.record.inferenceId).filter((i) => ids.includes(i));
    expect([...mine(a), ...mine(b)].sort()).toEqual([...ids].sort());
    expect(await judgeStore.claim(50, 60_000)).toEqual([]);
    // A worker that died: its lease is over, so the record comes back with the attempt counted.
    await db.prisma.inferenceRecord.updateMany({ where: { id: { in: ids } }, data: { judgeNextAt: new Date(0) } });
    const again = await judgeStore.claim(50, 60_000);
    expect(again.filter((c) => ids.includes(c.record.inferenceId)).map((c) => c.attempts)).toEqual(ids.map(() => 2));
  });

  it('when a record comes back after a worker died on its last attempt, then it fails with JUDGE_ATTEMPTS_EXHAUSTED', async () => {
    const project = randomUUID();
    await enable(project, 1);
    const id = await ingest(project);
    await db.prisma.inferenceRecord.update({ where: { id }, data: { judgeAttempts: 3 } });
    await drain(worker(fixedJudge(1), 3));
    expect(await row(id)).toMatchObject({ judgeStatus: 'failed', llmajScore: null });
    expect((await row(id)).judgeError).toMatch(/^JUDGE_ATTEMPTS_EXHAUSTED: /);
  });
});
