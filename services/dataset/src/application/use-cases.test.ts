import { INTERNAL_MESSAGE } from '@whetstone/errors';
import { createInMemoryDatasetStore } from '../../test/fakes/in-memory-dataset-store';
import { MemoryBlobStore } from '../../test/fakes/memory-blob-store';
import { recordingLogger } from '../../test/fakes/recording-logger';
import { createDatasetContext, type DatasetContext } from './context';
import { createUpload, type CreateUploadInput } from './create-upload';
import { deleteDataset } from './delete-dataset';
import { getDataset, listDatasets } from './get-datasets';
import { processUpload } from './process-upload';
import { resolveForTraining } from './resolve-for-training';
import { resumeAbandoned } from './resume';
import { getGeneration, startGeneration } from './start-generation';

const TEAM = 'team-1';

function setup(overrides: { maxConvertBytes?: number } = {}) {
  const store = createInMemoryDatasetStore();
  const blobs = new MemoryBlobStore();
  const logger = recordingLogger();
  const ctx = createDatasetContext({ store, blobs, logger, maxUploadBytes: 1 << 20, instance: 'test', ...overrides });
  return { ctx, store, blobs, logger };
}

function classificationRows(n: number): string {
  return Array.from({ length: n }, (_, i) => JSON.stringify({ text: `message number ${i}`, label: i % 2 ? 'a' : 'b' }))
    .join('\n')
    .concat('\n');
}

async function upload(
  ctx: DatasetContext,
  blobs: MemoryBlobStore,
  body: string,
  input: Partial<CreateUploadInput> = {},
) {
  const { version } = await createUpload(ctx, {
    teamId: TEAM,
    name: 'intents',
    type: 'classification',
    format: 'jsonl',
    filename: 'intents.jsonl',
    ...input,
  });
  await blobs.put('datasets', version.uploadKey, Buffer.from(body));
  await processUpload(ctx, TEAM, input.name ?? 'intents', version.versionNumber);
  await ctx.work.idle();
  return (await ctx.store.getVersionById(version.id))!;
}

describe('dataset use cases on in-memory ports', () => {
  it('when a CSV upload is for extraction, then it is refused with the format field named', async () => {
    const { ctx } = setup();
    await expect(
      createUpload(ctx, { teamId: TEAM, name: 'x', type: 'extraction', format: 'csv', filename: 'x.csv' }),
    ).rejects.toMatchObject({ kind: 'InvalidArgument', fieldErrors: [{ field: 'format' }] });
  });

  it('when a name is invalid, then the upload is refused before anything is stored', async () => {
    const { ctx, store } = setup();
    await expect(
      createUpload(ctx, { teamId: TEAM, name: '../x', type: 'classification', format: 'jsonl', filename: 'x' }),
    ).rejects.toMatchObject({ kind: 'InvalidArgument', fieldErrors: [{ field: 'dataset_name' }] });
    expect(store.versions.size).toBe(0);
  });

  it('when nothing was uploaded, then processing is refused with UPLOAD_MISSING', async () => {
    const { ctx } = setup();
    await createUpload(ctx, { teamId: TEAM, name: 'x', type: 'classification', format: 'jsonl', filename: 'x' });
    await expect(processUpload(ctx, TEAM, 'x', 0)).rejects.toMatchObject({ reason: 'UPLOAD_MISSING' });
  });

  it('when a valid JSONL file is processed, then the version is ready with both splits and a report', async () => {
    const { ctx, blobs } = setup();
    const done = await upload(ctx, blobs, classificationRows(40));
    expect(done).toMatchObject({ status: 'ready', size: 40 });
    expect(done.report).toMatchObject({ total_rows: 40, valid_rows: 40, failure_reason: '', labels: { a: 20, b: 20 } });
    expect(done.report!.train_rows + done.report!.heldout_rows).toBe(40);
    const resolved = await resolveForTraining(ctx, TEAM, 'intents');
    expect(blobs.objects.has(`datasets/${resolved.train}`)).toBe(true);
    expect(blobs.objects.has(`datasets/${resolved.heldout}`)).toBe(true);
  });

  it('when rows are invalid, then the version fails with the first problem in its reason and no splits remain', async () => {
    const { ctx, blobs } = setup();
    const done = await upload(ctx, blobs, `${classificationRows(20)}{"label": "no text"}\n`);
    expect(done.status).toBe('failed');
    expect(done.failureReason).toMatch(/^1 problem\(s\) found; the first is on line 21: /);
    expect([...blobs.objects.keys()].filter((k) => /train|heldout/.test(k))).toEqual([]);
    await expect(resolveForTraining(ctx, TEAM, 'intents')).rejects.toMatchObject({ reason: 'DATASET_NOT_READY' });
  });

  it('when a CSV file has a bad row, then the converter row report is kept as the failure reason', async () => {
    const { ctx, blobs } = setup();
    const done = await upload(ctx, blobs, 'text,label\n"unterminated,a\n', { format: 'csv', filename: 'x.csv' });
    expect(done.status).toBe('failed');
    expect(done.failureReason).toMatch(/^the CSV file has errors; the first problem is on line \d+: .+/);
    expect(done.report?.issues[0]).toMatchObject({ fatal: true });
  });

  it('when a CSV file is over the conversion limit, then it fails saying to upload JSONL', async () => {
    const { ctx, blobs } = setup({ maxConvertBytes: 10 });
    const done = await upload(ctx, blobs, 'text,label\nhello there,a\n', { format: 'csv', filename: 'x.csv' });
    expect(done.failureReason).toMatch(/^file too large to convert; .*upload JSONL for larger files$/);
  });

  it('when reading fails unexpectedly, then the stored reason is stable and the cause is only logged', async () => {
    const { ctx, blobs, logger } = setup();
    const { version } = await createUpload(ctx, {
      teamId: TEAM,
      name: 'x',
      type: 'classification',
      format: 'jsonl',
      filename: 'x',
    });
    await blobs.put('datasets', version.uploadKey, Buffer.from(classificationRows(20)));
    blobs.failGets = new Error('connect ECONNREFUSED 10.0.0.7:9000 secret-host');
    await processUpload(ctx, TEAM, 'x', 0);
    await ctx.work.idle();
    const done = (await ctx.store.getVersionById(version.id))!;
    expect(done.status).toBe('failed');
    expect(done.failureReason).toBe(`processing failed: ${INTERNAL_MESSAGE}`);
    expect(done.failureReason).not.toContain('secret-host');
    expect(logger.lines.some((l) => l.level === 'warn' && (l.fields as { err?: Error }).err === blobs.failGets)).toBe(
      true,
    );
  });

  it('when a version is already processing, then a second process call is refused', async () => {
    const { ctx, blobs } = setup();
    await upload(ctx, blobs, classificationRows(20));
    await expect(processUpload(ctx, TEAM, 'intents', 1)).rejects.toMatchObject({ reason: 'DATASET_NOT_UPLOADING' });
  });

  it('when a claim expired, then resumeAbandoned processes the version again', async () => {
    const { ctx, blobs, store } = setup();
    const { version } = await createUpload(ctx, {
      teamId: TEAM,
      name: 'x',
      type: 'classification',
      format: 'jsonl',
      filename: 'x',
    });
    await blobs.put('datasets', version.uploadKey, Buffer.from(classificationRows(20)));
    await store.transition(version.id, ['uploading'], 'converting');
    expect(await store.claim(version.id, 'gone', -1)).toBe(true);
    expect(await resumeAbandoned(ctx)).toBe(1);
    await ctx.work.idle();
    expect((await store.getVersionById(version.id))?.status).toBe('ready');
  });

  it('when a dataset is deleted, then its blobs go and reads are NotFound', async () => {
    const { ctx, blobs } = setup();
    await upload(ctx, blobs, classificationRows(20));
    expect(await listDatasets(ctx, TEAM)).toHaveLength(1);
    await deleteDataset(ctx, TEAM, 'intents');
    expect(blobs.objects.size).toBe(0);
    await expect(getDataset(ctx, TEAM, 'intents')).rejects.toMatchObject({ reason: 'DATASET_NOT_FOUND' });
  });

  it('when a generation job runs, then it ends ready with a new processed version', async () => {
    const { ctx } = setup();
    const request = {
      entityTypes: [],
      classifications: [{ task: 'intent', labels: ['refund', 'greeting'], multi_label: false }],
      domain: 'shop',
      count: 30,
      seed: 7,
    };
    const id = await startGeneration(ctx, TEAM, 'gen', request);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await ctx.work.idle();
    await expect(getGeneration(ctx, TEAM, id)).resolves.toMatchObject({
      status: 'ready',
      generated: 30,
      versionNumber: 1,
    });
    await expect(getGeneration(ctx, 'other-team', id)).rejects.toMatchObject({ reason: 'GENERATION_JOB_NOT_FOUND' });
  });

  it('when a generation asks for too few examples, then it is refused', async () => {
    const { ctx } = setup();
    await expect(
      startGeneration(ctx, TEAM, 'gen', {
        entityTypes: ['person'],
        classifications: [],
        domain: '',
        count: 3,
        seed: 1,
      }),
    ).rejects.toMatchObject({ fieldErrors: [{ field: 'count' }] });
  });
});
