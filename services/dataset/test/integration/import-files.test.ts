import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@connectrpc/connect';
import { FsBlobStore } from '@whetstone/blobs';
import { DatasetService, FileService, VersionStatus } from '@whetstone/proto/dataset/v1';
import { closeRpcChannels, createRpcClient, createRpcServer, type RpcServer } from '@whetstone/rpc';
import { applyMigrations, createTestSchema, rpcError, type TestSchema } from '@whetstone/testing';
import { createPrismaClient, type PrismaClient } from '../../src/adapters/prisma-client';
import { prismaFileStore } from '../../src/adapters/prisma-files';
import { prismaDatasetStore } from '../../src/adapters/prisma-store';
import { buildApp } from '../../src/app';
import { recordingLogger } from '../fakes/recording-logger';

const logger = recordingLogger();
const caller = (teamId: string) => ({ teamId, keyId: '', userId: randomUUID() });
const chat = (i: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `hi, I am person ${i}` },
      { role: 'assistant', content: `Hello person ${i}!` },
    ],
  });
const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => chat(from + i));

/**
 * DatasetService.ImportFiles over real gRPC, real Postgres and the filesystem blob store: Files API files become
 * a processed generation dataset version, the validation file pinned to the held-out split.
 */
describe('DatasetService.ImportFiles (real Postgres, filesystem blobs)', () => {
  let schema: TestSchema;
  let prisma: PrismaClient;
  let dir: string;
  let server: RpcServer;
  let datasets: Client<typeof DatasetService>;
  let files: Client<typeof FileService>;
  const team = randomUUID();

  beforeAll(async () => {
    schema = await createTestSchema('dataset_import');
    await applyMigrations(schema.url, path.resolve(__dirname, '../../prisma/migrations'));
    prisma = createPrismaClient(schema.url, { maxConnections: 4 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'dataset-import-'));
    const blobs = new FsBlobStore({
      root: dir,
      publicBaseUrl: 'http://localhost:1',
      signingSecret: 'import-secret-01',
    });
    const app = buildApp({
      store: prismaDatasetStore(prisma),
      blobs,
      files: prismaFileStore(prisma),
      logger,
      maxUploadBytes: 1 << 20,
    });
    server = await createRpcServer({
      name: 'dataset',
      port: 0,
      host: '127.0.0.1',
      logger,
      register: (router) => app.registerRoutes(router),
    });
    const addr = `127.0.0.1:${server.port}`;
    datasets = createRpcClient(DatasetService, { addr, caller: 'dataset-test' });
    files = createRpcClient(FileService, { addr, caller: 'dataset-test' });
  });

  afterAll(async () => {
    closeRpcChannels();
    await server?.close();
    await prisma?.$disconnect();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const upload = async (lines: string[], owner = team, purpose = 'fine-tune') =>
    (
      await files.uploadFile({
        caller: caller(owner),
        filename: 'chat.jsonl',
        purpose,
        content: Buffer.from(`${lines.join('\n')}\n`),
      })
    ).file!.id;
  const importFiles = (datasetName: string, trainingFileId: string, validationFileId = '') =>
    datasets.importFiles({ teamId: team, datasetName, trainingFileId, validationFileId });

  it('when a training and a validation file are imported, then the version is ready with each file in its split', async () => {
    const out = await importFiles('ft-both', await upload(rows(20)), await upload(rows(4, 100)));
    expect(out.trainingLines).toBe(20);
    expect(out.version).toMatchObject({ status: VersionStatus.READY, size: 24, datasetName: 'ft-both' });
    expect(out.version!.report).toMatchObject({ trainRows: 20, heldoutRows: 4, validRows: 24 });
    const resolved = await datasets.resolveForTraining({ teamId: team, datasetName: 'ft-both' });
    expect(resolved.version!.versionNumber).toBe(1);
  });

  it('when only a training file is imported, then about one row in ten is held out by the hash', async () => {
    const out = await importFiles('ft-hash', await upload(rows(60)));
    expect(out.version).toMatchObject({ status: VersionStatus.READY, size: 60 });
    const { trainRows, heldoutRows } = out.version!.report!;
    expect(trainRows + heldoutRows).toBe(60);
    expect(heldoutRows).toBeGreaterThan(0);
    expect(heldoutRows).toBeLessThan(20);
  });

  it('when a line of either file is bad, then the version fails with the line counted across both files', async () => {
    const training = await upload([...rows(9), '{"messages": [{"role": "robot", "content": "x"}]}', ...rows(5, 50)]);
    const out = await importFiles('ft-bad', training, await upload([chat(200), 'not json']));
    expect(out.trainingLines).toBe(15);
    expect(out.version!.status).toBe(VersionStatus.FAILED);
    const issues = out.version!.report!.issues.filter((i) => i.fatal).map((i) => [i.line, i.field]);
    expect(issues).toEqual([
      [10, 'messages.0.role'],
      [17, '(row)'],
    ]);
  });

  it('when a file is unknown or another team’s, or the name is bad, then the call says so', async () => {
    const foreign = await upload(rows(12), randomUUID());
    for (const id of [randomUUID(), foreign, 'not-a-uuid'])
      expect(await rpcError(importFiles('ft-missing', id))).toMatchObject({
        kind: 'NotFound',
        reason: 'FILE_NOT_FOUND',
      });
    const good = await upload(rows(12));
    expect(await rpcError(importFiles('ft-missing', good, foreign))).toMatchObject({ kind: 'NotFound' });
    expect(await rpcError(importFiles('bad name!', good))).toMatchObject({ kind: 'InvalidArgument' });
    const batchFile = await upload(rows(12), team, 'batch');
    expect(await rpcError(importFiles('ft-missing', batchFile))).toMatchObject({
      kind: 'InvalidArgument',
      fieldErrors: [
        { field: 'training_file_id', message: 'must name a file uploaded with purpose fine-tune, not batch' },
      ],
    });
    expect(await rpcError(importFiles('ft-missing', good, batchFile))).toMatchObject({
      fieldErrors: [{ field: 'validation_file_id' }],
    });
    expect((await datasets.listDatasets({ teamId: team })).datasets.map((d) => d.datasetName)).not.toContain(
      'ft-missing',
    );
  });
});
