import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fromBinary } from '@bufbuild/protobuf';
import { FsBlobStore } from '@whetstone/blobs';
import { DatasetVersionStatusChangedSchema, VersionStatus } from '@whetstone/proto/dataset/v1';
import { applyMigrations, createTestSchema, datasetFile, withClient, type TestSchema } from '@whetstone/testing';
import { createPrismaClient, type PrismaClient } from '../../src/adapters/prisma-client';
import { prismaDatasetStore } from '../../src/adapters/prisma-store';
import { createDatasetContext } from '../../src/application/context';
import { createUpload } from '../../src/application/create-upload';
import { listDatasets } from '../../src/application/get-datasets';
import { processUpload } from '../../src/application/process-upload';
import { resumeAbandoned } from '../../src/application/resume';
import { recordingLogger } from '../fakes/recording-logger';

const logger = recordingLogger();

/** The dataset use cases on real Postgres and a real filesystem blob store: crash safety and events. */
describe('dataset processing on Postgres and the filesystem store', () => {
  let schema: TestSchema;
  let prisma: PrismaClient;
  let dir: string;
  let blobs: FsBlobStore;

  beforeAll(async () => {
    schema = await createTestSchema('dataset');
    await applyMigrations(schema.url, path.resolve(__dirname, '../../prisma/migrations'));
    prisma = createPrismaClient(schema.url, { maxConnections: 4 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'dataset-test-'));
    blobs = new FsBlobStore({
      root: dir,
      publicBaseUrl: 'http://localhost:1',
      signingSecret: 'dataset-test-secret-01',
    });
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when a process dies mid-processing, then another one picks the version up once its claim expires, and it reaches ready', async () => {
    const store = prismaDatasetStore(prisma);
    const crashed = createDatasetContext({ store, blobs, logger, maxUploadBytes: 1 << 30, instance: 'crashed' });
    const { version } = await createUpload(crashed, {
      teamId: 'team',
      name: 'wikigold',
      type: 'extraction',
      format: 'jsonl',
      filename: 'train.jsonl',
    });
    await blobs.put('datasets', version.uploadKey, readFileSync(datasetFile('wikigold/dev.jsonl')));
    // What a crash leaves behind: converting, claimed by a process that is gone.
    expect(await store.transition(version.id, ['uploading'], 'converting')).toBe(true);
    expect(await store.claim(version.id, 'crashed', 60_000)).toBe(true);

    const survivor = createDatasetContext({ store, blobs, logger, maxUploadBytes: 1 << 30, instance: 'survivor' });
    expect(await resumeAbandoned(survivor)).toBe(0); // the claim still holds
    await withClient(schema.serverUrl, (c) =>
      c.query(`UPDATE "${schema.name}".dataset_versions SET lease_until = now() - interval '1 second' WHERE id = $1`, [
        version.id,
      ]),
    );
    expect(await resumeAbandoned(survivor)).toBe(1);
    await survivor.work.idle();
    const done = await store.getVersionById(version.id);
    expect(done).toMatchObject({
      status: 'ready',
      size: readFileSync(datasetFile('wikigold/dev.jsonl'), 'utf8').trim().split('\n').length,
    });

    // Every transition was written to the outbox with the state change.
    const events = await prisma.outboxEvent.findMany({ orderBy: { id: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'whetstone.dataset.v1.DatasetVersionStatusChanged',
        'whetstone.dataset.v1.DatasetVersionReady',
      ]),
    );
    const changes = events
      .filter((e) => e.type.endsWith('StatusChanged'))
      .map((e) => fromBinary(DatasetVersionStatusChangedSchema, e.payload));
    expect(changes.length).toBeGreaterThanOrEqual(4);
    expect(changes[0]).toMatchObject({ fromStatus: VersionStatus.UNSPECIFIED, toStatus: VersionStatus.UPLOADING });
    expect(changes.at(-1)).toMatchObject({ fromStatus: VersionStatus.VALIDATING, toStatus: VersionStatus.READY });
  });

  it('when processing fails, then no split files are left behind and the version never becomes ready', async () => {
    const store = prismaDatasetStore(prisma);
    const datasets = createDatasetContext({ store, blobs, logger, maxUploadBytes: 1 << 30 });
    const { version } = await createUpload(datasets, {
      teamId: 'team',
      name: 'broken',
      type: 'classification',
      format: 'jsonl',
      filename: 'x.jsonl',
    });
    await blobs.put('datasets', version.uploadKey, Buffer.from('{"text": "only one"}\n{"label": "no text"}\n'));
    await processUpload(datasets, 'team', 'broken', 0);
    await datasets.work.idle();
    const failed = await store.getVersionById(version.id);
    expect(failed?.status).toBe('failed');
    expect(failed?.report?.issues.map((i) => i.line)).toEqual([1, 2]);
    const left: string[] = [];
    for await (const o of blobs.list('datasets', `teams/team/${version.datasetId}/`)) left.push(o.key);
    expect(left.filter((k) => /train|heldout/.test(k))).toEqual([]);
  });

  it('when 8 first uploads of one new name race, then there is one dataset with versions 1 to 8 and no error', async () => {
    const datasets = createDatasetContext({
      store: prismaDatasetStore(prisma),
      blobs,
      logger,
      maxUploadBytes: 1 << 30,
    });
    const upload = () =>
      createUpload(datasets, {
        teamId: 'race',
        name: 'fresh',
        type: 'extraction',
        format: 'jsonl',
        filename: 'a.jsonl',
      });
    for (let round = 0; round < 3; round++) {
      const name = `fresh-${round}`;
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () =>
          createUpload(datasets, { teamId: 'race', name, type: 'extraction', format: 'jsonl', filename: 'a.jsonl' }),
        ),
      );
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      const numbers = results.map((r) => (r.status === 'fulfilled' ? r.value.version.versionNumber : 0));
      expect(numbers.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(new Set(results.map((r) => (r.status === 'fulfilled' ? r.value.version.datasetId : '')))).toHaveProperty(
        'size',
        1,
      );
    }
    await expect(upload()).resolves.toMatchObject({ version: { versionNumber: 1 } });
  });

  it('when the newest version failed but an earlier one is ready, then the list says both', async () => {
    const datasets = createDatasetContext({
      store: prismaDatasetStore(prisma),
      blobs,
      logger,
      maxUploadBytes: 1 << 30,
    });
    const input = { teamId: 'mixed', name: 'wiki', type: 'extraction', format: 'jsonl', filename: 'a.jsonl' } as const;
    const first = await createUpload(datasets, input);
    await blobs.put('datasets', first.version.uploadKey, readFileSync(datasetFile('wikigold/dev.jsonl')));
    await processUpload(datasets, 'mixed', 'wiki', 1);
    await datasets.work.idle();
    const second = await createUpload(datasets, input);
    await blobs.put('datasets', second.version.uploadKey, Buffer.from('not json\n'));
    await processUpload(datasets, 'mixed', 'wiki', 2);
    await datasets.work.idle();
    expect(await listDatasets(datasets, 'mixed')).toEqual([
      expect.objectContaining({
        datasetName: 'wiki',
        newest: expect.objectContaining({ status: 'failed', versionNumber: 2 }),
        latestReadyVersion: 1,
      }),
    ]);
  });
});
