import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, fromJson, toBinary, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import { timestampFromDate, ValueSchema } from '@bufbuild/protobuf/wkt';
import { Pool } from 'pg';
import { FsBlobStore, readAll } from '@whetstone/blobs';
import { PgEventLog, Topics, type EventEnvelope, type Subscription } from '@whetstone/events';
import { FeedbackSubmittedSchema, InferenceDeletedSchema, Verdict } from '@whetstone/proto/history/v1';
import { applyMigrations, createTestSchema, eventually, testDatabaseUrl, type TestSchema } from '@whetstone/testing';
import { prismaFeedbackStore } from '../../src/adapters/prisma-feedback';
import { createPrismaClient, type PrismaClient } from '../../src/adapters/prisma-client';
import { prismaDatasetStore } from '../../src/adapters/prisma-store';
import { buildApp, type DatasetApp } from '../../src/app';
import { getDataset, listDatasets } from '../../src/application/get-datasets';
import type { DatasetDeps } from '../../src/application/ports';
import { splitKeys } from '../../src/domain/dataset';
import { FEEDBACK_CONSUMER, FEEDBACK_TOPIC } from '../../src/transport/events/feedback-submitted.consumer';
import { recordingLogger } from '../fakes/recording-logger';

const TEAM = '5b0f3c1e-0000-4000-8000-000000000001';
const PROJECT = '5b0f3c1e-0000-4000-8000-0000000000cc';
const NAME = `feedback-${PROJECT}`;
const logger = recordingLogger();
const TEXT = (i: number) => `Ada Lovelace wrote note ${i} in London.`;
const id = (i: number) => `0193a1b2-0000-7000-8000-${String(i).padStart(12, '0')}`;

/** FeedbackSubmitted through the Postgres event log into the consumer as main.ts wires it, on real Postgres. */
describe('feedback datasets from feedback.v1 (real Postgres, event log)', () => {
  let schema: TestSchema;
  let logSchema: TestSchema;
  let prisma: PrismaClient;
  let pool: Pool;
  let log: PgEventLog;
  let consumer: Subscription;
  let dir: string;
  let deps: DatasetDeps;
  let app: DatasetApp;
  let seq = 0;

  beforeAll(async () => {
    schema = await createTestSchema('dataset_feedback');
    await applyMigrations(schema.url, path.resolve(__dirname, '../../prisma/migrations'));
    logSchema = await createTestSchema('dataset_feedback_log');
    prisma = createPrismaClient(schema.url, { maxConnections: 4 });
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 4 });
    log = new PgEventLog(pool, logSchema.name);
    dir = mkdtempSync(path.join(os.tmpdir(), 'dataset-feedback-'));
    const blobs = new FsBlobStore({
      root: dir,
      publicBaseUrl: 'http://localhost:1',
      signingSecret: 'dataset-test-secret-01',
    });
    const store = prismaDatasetStore(prisma);
    deps = {
      store,
      blobs,
      logger,
      maxUploadBytes: 1 << 20,
      feedback: prismaFeedbackStore(prisma),
      feedbackVersionMinRows: 2,
    };
    app = buildApp(deps);
    consumer = await log.subscribe({
      group: FEEDBACK_CONSUMER,
      topics: [FEEDBACK_TOPIC],
      logger,
      handleBatch: (envelopes) => app.onFeedbackEvents(envelopes),
    });
  });

  afterAll(async () => {
    await consumer?.stop();
    await app?.idle();
    await log?.close();
    await pool?.end();
    await prisma?.$disconnect();
    await schema?.drop();
    await logSchema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** As history's relay publishes it: keyed by inference id, a fresh event id each time. */
  function feedback(
    i: number,
    verdict: 'correct' | 'incorrect',
    answer: JsonValue,
    at: Date,
    projectId = PROJECT,
  ): EventEnvelope {
    const event = create(FeedbackSubmittedSchema, {
      inferenceId: id(i),
      teamId: TEAM,
      projectId,
      modelId: 'whetstone-extract-base',
      task: 'extraction',
      verdict: verdict === 'correct' ? Verdict.CORRECT : Verdict.INCORRECT,
      ...(verdict === 'correct'
        ? { output: fromJson(ValueSchema, answer) }
        : { correctedOutput: fromJson(ValueSchema, answer) }),
      inputs: [TEXT(i)],
      schema: { entities: ['person', 'city'] },
      submittedAt: timestampFromDate(at),
    });
    return relayed(FeedbackSubmittedSchema, event, i, at);
  }

  /** InferenceDeleted as history's relay publishes it, on the same topic and key as the inference's feedback. */
  function deleted(i: number, at: Date, projectId: string): EventEnvelope {
    const event = create(InferenceDeletedSchema, {
      inferenceId: id(i),
      teamId: TEAM,
      projectId,
      deletedAt: timestampFromDate(at),
    });
    return relayed(InferenceDeletedSchema, event, i, at);
  }

  /** An event of inference i as history's relay delivers it: keyed by the inference, a fresh event id each time. */
  function relayed<D extends DescMessage>(schema: D, event: MessageShape<D>, i: number, at: Date): EventEnvelope {
    const payload = toBinary(schema, event);
    return {
      id: `relay/${++seq}`,
      topic: Topics.feedback,
      type: schema.typeName,
      key: id(i),
      payload,
      headers: {},
      occurredAt: at,
    };
  }

  const versions = (name = NAME) => getDataset(deps, TEAM, name).catch(() => []);
  async function rowsOf(versionNumber: number): Promise<unknown[]> {
    const v = (await versions()).find((x) => x.versionNumber === versionNumber)!;
    const keys = splitKeys(TEAM, v.datasetId, versionNumber);
    const text = [
      Buffer.from(await readAll(deps.blobs, 'datasets', keys.train)).toString('utf8'),
      Buffer.from(await readAll(deps.blobs, 'datasets', keys.heldout)).toString('utf8'),
    ].join('');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { text: string })
      .sort((a, b) => a.text.localeCompare(b.text, 'en', { numeric: true }));
  }

  it('when a batch of corrections and confirmations arrives, then one ready version holds their span rows and reports the unconvertible one; a later verdict replaces its row in the next version', async () => {
    const t0 = new Date('2026-11-26T10:00:00Z');
    const batch: EventEnvelope[] = [];
    for (let i = 1; i <= 10; i++)
      batch.push(feedback(i, 'incorrect', { entities: { person: ['Ada Lovelace'], city: ['London'] } }, t0));
    batch.push(feedback(11, 'correct', [{ entities: { person: [{ text: 'Ada Lovelace', confidence: 0.9 }] } }], t0));
    batch.push(feedback(12, 'incorrect', { entities: { person: ['Grace Hopper'] } }, t0));
    await log.publish(batch);

    await eventually(async () => (await versions())[0]?.status === 'ready');
    const [v1] = await versions();
    expect(v1).toMatchObject({ versionNumber: 1, type: 'extraction', format: 'jsonl', size: 11 });
    expect(v1!.report).toMatchObject({ total_rows: 11, valid_rows: 11, failure_reason: '' });
    expect(v1!.report!.issues).toEqual([
      {
        line: 0,
        field: `feedback.${id(12)}.output.entities.person.0`,
        reason: '"Grace Hopper" is not in the input text',
        fatal: false,
      },
    ]);
    const rows = await rowsOf(1);
    expect(rows).toHaveLength(11);
    expect(rows[0]).toEqual({
      text: TEXT(1),
      entities: [
        { start: 0, end: 12, label: 'person' },
        { start: 29, end: 35, label: 'city' },
      ],
    });
    expect(rows[10]).toEqual({ text: TEXT(11), entities: [{ start: 0, end: 12, label: 'person' }] });
    expect((await listDatasets(deps, TEAM)).map((d) => [d.datasetName, d.newest.versionNumber])).toEqual([[NAME, 1]]);

    // One changed verdict is below the threshold (2): no version; a redelivered old verdict changes nothing.
    const t1 = new Date('2026-11-26T11:00:00Z');
    await log.publish([
      feedback(1, 'incorrect', { entities: { person: ['Ada Lovelace'] } }, t1),
      feedback(3, 'incorrect', { entities: { person: ['Ada Lovelace'], city: ['London'] } }, t0),
    ]);
    await eventually(async () => {
      const [f] = await prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "${schema.name}".feedback_examples WHERE pending`,
      );
      return f!.n === 1;
    });
    expect(await versions()).toHaveLength(1);

    // The second change reaches it: version 2 has inference 1's replaced row and inference 12 fixed.
    await log.publish([feedback(12, 'incorrect', { entities: { person: ['Ada Lovelace'] } }, t1)]);
    await eventually(async () => {
      const [newest] = await versions();
      return newest?.versionNumber === 2 && newest.status === 'ready';
    });
    const [v2] = await versions();
    expect(v2).toMatchObject({ versionNumber: 2, size: 12 });
    expect(v2!.report!.issues).toEqual([]);
    const rows2 = await rowsOf(2);
    expect(rows2[0]).toEqual({ text: TEXT(1), entities: [{ start: 0, end: 12, label: 'person' }] });
    expect(rows2[11]).toEqual({ text: TEXT(12), entities: [{ start: 0, end: 12, label: 'person' }] });
  });

  it('when cutting a version fails, then the redelivered batch cuts it, once', async () => {
    const project = '5b0f3c1e-0000-4000-8000-0000000000dd';
    let failPuts = 1;
    const flaky: DatasetDeps['blobs'] = Object.assign(Object.create(deps.blobs) as DatasetDeps['blobs'], {
      put: (...args: Parameters<DatasetDeps['blobs']['put']>) =>
        failPuts-- > 0 ? Promise.reject(new Error('storage down')) : deps.blobs.put(...args),
    });
    const flakyApp = buildApp({ ...deps, blobs: flaky });
    const at = new Date('2026-11-26T12:00:00Z');
    const batch = [100, 101].map((i) => feedback(i, 'incorrect', { entities: { city: ['London'] } }, at, project));
    await expect(flakyApp.onFeedbackEvents(batch)).rejects.toThrow('storage down');
    await flakyApp.onFeedbackEvents(batch);
    await flakyApp.onFeedbackEvents(batch);
    await flakyApp.idle();
    const cut = await getDataset(deps, TEAM, `feedback-${project}`);
    // The version whose file could not be written failed; the retry cut exactly one more (too small to train).
    expect(cut.map((v) => [v.versionNumber, v.status, v.report?.failure_reason])).toEqual([
      [2, 'failed', expect.stringMatching(/at least 10/)],
      [1, 'failed', 'the feedback file could not be written'],
    ]);
    expect(cut[0]!.report).toMatchObject({ total_rows: 2, valid_rows: 2 });
  });

  it('when inferences are deleted, then the next version leaves their verdicts out and earlier versions keep them', async () => {
    const project = '5b0f3c1e-0000-4000-8000-0000000000ee';
    const name = `feedback-${project}`;
    const t0 = new Date('2026-11-28T10:00:00Z');
    const answer = { entities: { person: ['Ada Lovelace'] } };
    await log.publish(
      [200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211].map((i) =>
        feedback(i, 'incorrect', answer, t0, project),
      ),
    );
    await eventually(async () => (await versions(name))[0]?.status === 'ready');

    // Two deleted inferences reach the threshold (2); a deleted inference without feedback changes nothing.
    const t1 = new Date('2026-11-28T11:00:00Z');
    await log.publish([deleted(200, t1, project), deleted(201, t1, project), deleted(299, t1, project)]);
    await eventually(async () => {
      const [newest] = await versions(name);
      return newest?.versionNumber === 2 && newest.status === 'ready';
    });
    const [v2, v1] = await versions(name);
    expect(v1).toMatchObject({ versionNumber: 1, size: 12 });
    expect(v2).toMatchObject({ versionNumber: 2, size: 10 });
    const held = await prisma.$queryRawUnsafe<{ inference_id: string; verdict: string; pending: boolean }[]>(
      `SELECT inference_id, verdict, pending FROM "${schema.name}".feedback_examples
       WHERE project_id = '${project}' AND verdict = 'deleted' ORDER BY inference_id`,
    );
    expect(held).toEqual([
      { inference_id: id(200), verdict: 'deleted', pending: false },
      { inference_id: id(201), verdict: 'deleted', pending: false },
    ]);
  });
});
