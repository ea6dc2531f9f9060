import { fromBinary, toJson } from '@bufbuild/protobuf';
import { timestampFromDate, ValueSchema } from '@bufbuild/protobuf/wkt';
import { FeedbackSubmittedSchema, InferenceDeletedSchema } from '@whetstone/proto/history/v1';
import { createLogger } from '@whetstone/telemetry';
import { inProcessIngestSignal } from '../../src/adapters/ingest-signal';
import { prismaHistoryStore } from '../../src/adapters/prisma-history-store';
import { prismaJudgeStore } from '../../src/adapters/prisma-judge-store';
import { buildApp, type HistoryApp } from '../../src/app';
import type { HistoryDeps } from '../../src/application/deps';
import { getInference } from '../../src/application/get-inference';
import { listInferences } from '../../src/application/list-inferences';
import { submitFeedback } from '../../src/application/submit-feedback';
import { getFeedback } from '../../src/application/get-feedback';
import { deleteInference } from '../../src/application/delete-inference';
import { updateMetadata } from '../../src/application/update-metadata';
import { createHistoryDatabase } from '../factories/database';
import { InferenceSurface } from '@whetstone/proto/inference/v1';
import { completed, envelopeOf } from '../factories/events';

const TEAM = '5b0f3c1e-0000-4000-8000-000000000001';
const OTHER = '5b0f3c1e-0000-4000-8000-000000000002';

describe('inference-history against real Postgres', () => {
  let db: Awaited<ReturnType<typeof createHistoryDatabase>>;
  let deps: HistoryDeps;
  let app: HistoryApp;

  beforeAll(async () => {
    db = await createHistoryDatabase();
    deps = {
      store: prismaHistoryStore(db.prisma),
      signal: inProcessIngestSignal(),
      now: () => new Date(),
      readWaitMs: 5_000,
      inFlightWindowMs: 30_000,
    };
    app = buildApp({
      ...deps,
      judgeStore: prismaJudgeStore(db.prisma),
      logger: createLogger({ service: 'history-test', level: 'silent' }),
    });
  });
  afterAll(() => db.close());

  it('when an event is delivered twice (and twice in one batch), then exactly one record exists and nothing fails', async () => {
    const event = completed();
    expect(await app.onInferenceEvents([envelopeOf(event), envelopeOf(event)])).toBe(1);
    expect(await app.onInferenceEvents([envelopeOf(event)])).toBe(0);
    expect(await db.prisma.inferenceRecord.count({ where: { id: event.inferenceId } })).toBe(1);
    const record = await getInference(deps, TEAM, event.inferenceId);
    expect(record).toMatchObject({
      task: 'ner',
      surface: 'native',
      modelId: 'whetstone-extract-base',
      latencyMs: 12.5,
    });
    expect(record.usage.costMicroCredits).toBe(1001n);
  });

  it('when another team asks for a record, then it is not found, at once', async () => {
    const event = completed();
    await app.onInferenceEvents([envelopeOf(event)]);
    const answered = jest.fn();
    const other = getInference(deps, OTHER, event.inferenceId).catch((err: unknown) => answered(err));
    // An old id (minted in 2022) is never in flight either.
    const old = getInference(deps, TEAM, '017f22e2-79b0-7cc3-98c4-dc0c0c07398f').catch((err: unknown) => answered(err));
    await Promise.all([other, old]);
    expect(answered.mock.calls.map(([err]) => (err as { kind: string }).kind)).toEqual(['NotFound', 'NotFound']);
    // Neither waited for an ingest: no reader is left waiting.
    expect((deps.signal as ReturnType<typeof inProcessIngestSignal>).waiting()).toBe(0);
  });

  it('when a read arrives before the event, then it waits and is woken by the ingest', async () => {
    const event = completed();
    const read = getInference(deps, TEAM, event.inferenceId);
    await new Promise((r) => setTimeout(r, 50));
    await app.onInferenceEvents([envelopeOf(event)]);
    await expect(read).resolves.toMatchObject({ inferenceId: event.inferenceId });
  });

  it('filters by model, task, latency and time, newest first, and rejects a min above its max', async () => {
    const team = '5b0f3c1e-0000-4000-8000-000000000003';
    const base = Date.now() - 60_000;
    const events = [0, 1, 2, 3].map((i) =>
      completed({
        teamId: team,
        model: i % 2 ? 'job-a' : 'whetstone-extract-base',
        latencyMs: 10 * (i + 1),
        startedAt: { seconds: BigInt(Math.floor((base + i * 1000) / 1000)), nanos: 0 } as never,
      }),
    );
    await app.onInferenceEvents(events.map(envelopeOf));
    const page = await listInferences(deps, team, { limit: 10, offset: 0, modelId: 'job-a' });
    expect(page.total).toBe(2);
    expect(page.records.map((r) => r.latencyMs)).toEqual([40, 20]);
    const latency = await listInferences(deps, team, { limit: 10, offset: 0, latencyMin: 20, latencyMax: 30 });
    expect(latency.records.map((r) => r.latencyMs)).toEqual([30, 20]);
    const since = new Date(Math.floor((base + 1000) / 1000) * 1000);
    const until = new Date(Math.floor((base + 3000) / 1000) * 1000);
    const window = await listInferences(deps, team, { limit: 10, offset: 0, since, until });
    expect(window.records.map((r) => r.latencyMs)).toEqual([30, 20]);
    expect((await listInferences(deps, team, { limit: 1, offset: 1 })).records[0]!.latencyMs).toBe(30);
    await expect(
      listInferences(deps, team, { limit: 10, offset: 0, latencyMin: 5, latencyMax: 1, llmajScoreMax: 2 }),
    ).rejects.toMatchObject({
      kind: 'InvalidArgument',
      fieldErrors: [{ field: 'llmaj_score_max' }, { field: 'latency_max' }],
    });
    expect((await listInferences(deps, OTHER, { limit: 10, offset: 0, modelId: 'job-a' })).total).toBe(0);
  });

  it('stores feedback with its outbox event, replaces it on resubmission, and rejects corrections of the wrong shape', async () => {
    const event = completed({ projectId: '5b0f3c1e-0000-4000-8000-0000000000cc' });
    await app.onInferenceEvents([envelopeOf(event)]);
    await expect(getFeedback(deps, TEAM, event.inferenceId)).rejects.toMatchObject({ reason: 'FEEDBACK_NOT_FOUND' });
    const bad = (correctedOutput: unknown, verdict: 'correct' | 'incorrect' = 'incorrect') =>
      submitFeedback(deps, TEAM, event.inferenceId, { verdict, correctedOutput, notes: '' });
    await expect(bad(null)).rejects.toMatchObject({ kind: 'InvalidArgument' });
    await expect(bad({ entities: { person: ['Ada'] } }, 'correct')).rejects.toMatchObject({ kind: 'InvalidArgument' });
    await expect(bad({ entities: { person: ['Grace Hopper'] } })).rejects.toMatchObject({
      fieldErrors: [{ field: 'corrected_output.entities.person.0' }],
    });
    await expect(bad({ entities: { planet: ['London'] } })).rejects.toMatchObject({
      fieldErrors: [{ field: 'corrected_output.entities.planet' }],
    });
    await expect(bad({ entities: { city: [{ text: 'London', start: 0, end: 6 }] } })).rejects.toMatchObject({
      kind: 'InvalidArgument',
    });
    await expect(bad({ sentiment: 'positive' })).rejects.toMatchObject({ kind: 'InvalidArgument' });

    const ok = await bad({ entities: { person: ['Ada Lovelace'], city: [{ text: 'London', start: 36, end: 42 }] } });
    expect(ok.verdict).toBe('incorrect');
    const again = await submitFeedback(deps, TEAM, event.inferenceId, {
      verdict: 'correct',
      correctedOutput: null,
      notes: 'fine',
    });
    const stored = await getFeedback(deps, TEAM, event.inferenceId);
    expect(stored).toMatchObject({ verdict: 'correct', correctedOutput: null, notes: 'fine' });
    expect(stored.submittedAt.getTime()).toBe(again.submittedAt.getTime());
    const outbox = await db.prisma.outboxEvent.findMany({ where: { key: event.inferenceId } });
    expect(outbox.map((o) => [o.topic, o.type])).toEqual([
      ['feedback.v1', 'whetstone.history.v1.FeedbackSubmitted'],
      ['feedback.v1', 'whetstone.history.v1.FeedbackSubmitted'],
    ]);
    // The confirmation carries the original output (its training row) and the project, the correction does not.
    const [correction, confirmation] = [...outbox]
      .sort((a, b) => Number(a.id - b.id))
      .map((o) => fromBinary(FeedbackSubmittedSchema, o.payload));
    expect(correction!.output).toBeUndefined();
    expect(confirmation!.projectId).toBe('5b0f3c1e-0000-4000-8000-0000000000cc');
    expect(toJson(ValueSchema, confirmation!.output!)).toEqual(
      (await getInference(deps, TEAM, event.inferenceId)).outputs,
    );
  });

  it('deletes a record for good: gone from reads and lists, never stored again, InferenceDeleted after its feedback', async () => {
    const projectId = '5b0f3c1e-0000-4000-8000-0000000000dd';
    const event = completed({ projectId });
    await app.onInferenceEvents([envelopeOf(event)]);
    await submitFeedback(deps, TEAM, event.inferenceId, { verdict: 'correct', correctedOutput: null, notes: '' });
    const held = await getInference(deps, TEAM, event.inferenceId);
    // Another team's delete is NotFound and deletes nothing.
    await expect(deleteInference(deps, OTHER, event.inferenceId)).rejects.toMatchObject({ kind: 'NotFound' });
    expect(await deleteInference(deps, TEAM, event.inferenceId.toUpperCase())).toBe(event.inferenceId);

    await expect(getInference(deps, TEAM, event.inferenceId)).rejects.toMatchObject({ reason: 'INFERENCE_NOT_FOUND' });
    await expect(deleteInference(deps, TEAM, event.inferenceId)).rejects.toMatchObject({ kind: 'NotFound' });
    const page = await listInferences(deps, TEAM, { limit: 100, offset: 0, projectId });
    expect(page.records).toEqual([]);
    // A verdict racing the deletion (its record read before) writes nothing: no row, no event.
    const late = { inferenceId: held.inferenceId, verdict: 'correct' as const, correctedOutput: null, notes: '' };
    expect(await deps.store.saveFeedback(held, { ...late, submittedAt: new Date() })).toBe(false);
    // A redelivered event does not bring it back.
    expect(await app.onInferenceEvents([envelopeOf(event)])).toBe(0);
    expect(await db.prisma.inferenceRecord.count({ where: { id: event.inferenceId } })).toBe(0);

    const outbox = await db.prisma.outboxEvent.findMany({ where: { key: event.inferenceId }, orderBy: { id: 'asc' } });
    expect(outbox.map((o) => o.type)).toEqual([
      'whetstone.history.v1.FeedbackSubmitted',
      'whetstone.history.v1.InferenceDeleted',
    ]);
    expect(fromBinary(InferenceDeletedSchema, outbox[1]!.payload)).toMatchObject({
      inferenceId: event.inferenceId,
      teamId: TEAM,
      projectId,
    });
  });

  it('lists one surface by metadata, oldest or newest first, by cursor, and updates metadata', async () => {
    const team = '5b0f3c1e-0000-4000-8000-000000000004';
    const base = Date.now() - 60_000;
    const at = (i: number) => timestampFromDate(new Date(base + i * 1000));
    const chat = (i: number, metadata: Record<string, string>) =>
      completed({
        teamId: team,
        surface: InferenceSurface.CHAT_COMPLETIONS,
        metadata,
        startedAt: at(i),
        completedAt: at(i),
      });
    const events = [
      chat(1, { run: 'a', user: 'u1' }),
      chat(2, { run: 'b' }),
      chat(3, { run: 'a' }),
      completed({ teamId: team, startedAt: at(4), completedAt: at(4) }),
    ];
    await app.onInferenceEvents(events.map(envelopeOf));
    const ids = (filter: Partial<Parameters<typeof listInferences>[2]>) =>
      listInferences(deps, team, { limit: 10, offset: 0, ...filter }).then((p) => p.records.map((r) => r.inferenceId));
    const [a1, b2, a3] = events.map((e) => e.inferenceId);
    expect(await ids({ surface: 'chat-completions' })).toEqual([a3, b2, a1]);
    expect(await ids({ surface: 'chat-completions', oldestFirst: true })).toEqual([a1, b2, a3]);
    expect(await ids({ surface: 'chat-completions', metadata: { run: 'a' } })).toEqual([a3, a1]);
    expect(await ids({ metadata: { run: 'a', user: 'u1' } })).toEqual([a1]);
    expect(await ids({ surface: 'chat-completions', oldestFirst: true, afterId: a1 })).toEqual([b2, a3]);
    expect(await ids({ surface: 'chat-completions', afterId: b2, limit: 1 })).toEqual([a1]);
    // A cursor that is not in the list (another surface's record) names after_id.
    await expect(ids({ surface: 'chat-completions', afterId: events[3]!.inferenceId })).rejects.toMatchObject({
      fieldErrors: [{ field: 'after_id' }],
    });
    const updated = await updateMetadata(deps, team, a1!, { run: 'c' });
    expect(updated.metadata).toEqual({ run: 'c' });
    expect((await getInference(deps, team, a1!)).metadata).toEqual({ run: 'c' });
    expect(await ids({ metadata: { run: 'a' } })).toEqual([a3]);
    await expect(updateMetadata(deps, OTHER, a1!, {})).rejects.toMatchObject({ kind: 'NotFound' });
  });

  it('keeps the conversation of a Responses call, and drops one that is no UUID without losing the batch', async () => {
    const team = '5b0f3c1e-0000-4000-8000-000000000005';
    const conversationId = '0195a0c4-1111-7000-8000-00000000c0c0';
    const events = [
      completed({ teamId: team, surface: InferenceSurface.RESPONSES, conversationId: conversationId.toUpperCase() }),
      completed({ teamId: team, surface: InferenceSurface.RESPONSES, conversationId: 'not-a-uuid' }),
      completed({ teamId: team, surface: InferenceSurface.RESPONSES }),
    ];
    await app.onInferenceEvents(events.map(envelopeOf));
    const [kept, malformed, none] = await Promise.all(events.map((e) => getInference(deps, team, e.inferenceId)));
    expect(kept!.conversationId).toBe(conversationId);
    expect(malformed!.conversationId).toBeUndefined();
    expect(none!.conversationId).toBeUndefined();
  });

  it('filters by metadata that many records share as well as by rare metadata', async () => {
    const team = '5b0f3c1e-0000-4000-8000-000000000005';
    const common = Array.from({ length: 2_001 }, () => completed({ teamId: team, metadata: { env: 'prod' } }));
    const rare = completed({ teamId: team, metadata: { env: 'prod', run: 'only-me' } });
    await app.onInferenceEvents([...common, rare].map(envelopeOf));
    // Past the GIN candidates' cap the page-order scan answers; under it, the candidates do.
    const many = await listInferences(deps, team, { limit: 10, offset: 0, metadata: { env: 'prod' } });
    expect(many.records).toHaveLength(10);
    expect(many).toMatchObject({ total: 1_000, totalCapped: true });
    const one = await listInferences(deps, team, { limit: 10, offset: 0, metadata: { run: 'only-me' } });
    expect(one.records.map((r) => r.inferenceId)).toEqual([rare.inferenceId]);
    // Another team's metadata never matches.
    expect((await listInferences(deps, TEAM, { limit: 10, offset: 0, metadata: { run: 'only-me' } })).records).toEqual(
      [],
    );
  });
});
