import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { FsBlobStore } from '@whetstone/blobs';
import { FileService, type StoredFile } from '@whetstone/proto/dataset/v1';
import { closeRpcChannels, createRpcClient, createRpcServer, type RpcServer } from '@whetstone/rpc';
import { applyMigrations, createTestSchema, rpcError, type TestSchema, withClient } from '@whetstone/testing';
import { createPrismaClient, type PrismaClient } from '../../src/adapters/prisma-client';
import { prismaFileStore } from '../../src/adapters/prisma-files';
import { prismaDatasetStore } from '../../src/adapters/prisma-store';
import { buildApp, type DatasetApp } from '../../src/app';
import { recordingLogger } from '../fakes/recording-logger';

const logger = recordingLogger();
const MAX_BYTES = 4096;
/** Room for three of the largest files per team. */
const TEAM_MAX_BYTES = 3 * MAX_BYTES;
/** In every uploaded body, so a test can tell whether file content reached a log line. */
const MARKER = 'content-never-logged-7f3a';
const caller = (teamId: string) => ({ teamId, keyId: '', userId: randomUUID() });

/** FileService over real gRPC (the service in-process on port 0), real Postgres and the filesystem blob store. */
describe('FileService over gRPC (real Postgres, filesystem blobs)', () => {
  let schema: TestSchema;
  let prisma: PrismaClient;
  let dir: string;
  let app: DatasetApp;
  let server: RpcServer;
  let client: Client<typeof FileService>;

  beforeAll(async () => {
    schema = await createTestSchema('dataset_files');
    await applyMigrations(schema.url, path.resolve(__dirname, '../../prisma/migrations'));
    prisma = createPrismaClient(schema.url, { maxConnections: 4 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'dataset-files-'));
    const blobs = new FsBlobStore({
      root: dir,
      publicBaseUrl: 'http://localhost:1',
      signingSecret: 'dataset-test-secret-01',
    });
    app = buildApp({
      store: prismaDatasetStore(prisma),
      blobs,
      files: prismaFileStore(prisma),
      logger,
      maxUploadBytes: 1 << 20,
      maxFileBytes: MAX_BYTES,
      maxTeamFileBytes: TEAM_MAX_BYTES,
    });
    server = await createRpcServer({
      name: 'dataset',
      port: 0,
      host: '127.0.0.1',
      logger,
      register: (router) => app.registerRoutes(router),
    });
    client = createRpcClient(FileService, { addr: `127.0.0.1:${server.port}`, caller: 'dataset-test' });
  });

  afterAll(async () => {
    closeRpcChannels();
    await server?.close();
    await prisma?.$disconnect();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const blobPath = (teamId: string, fileId: string) => path.join(dir, 'datasets', 'files', teamId, fileId);

  async function upload(
    teamId: string,
    fields: { filename?: string; purpose?: string; content?: Uint8Array; expiresAfterSeconds?: bigint } = {},
  ): Promise<StoredFile> {
    const res = await client.uploadFile({
      caller: caller(teamId),
      filename: 'input.jsonl',
      purpose: 'batch',
      content: Buffer.from(`{"custom_id":"${MARKER}"}\n`),
      ...fields,
    });
    return res.file!;
  }

  it('when a file is uploaded, then get, list and content return it, and once deleted it is NotFound and its bytes are gone', async () => {
    const team = randomUUID();
    const bytes = Buffer.concat([Buffer.from(`${MARKER}\n`), Buffer.from([0, 255, 254, 10, 13])]);
    const file = await upload(team, { filename: 'requests é.jsonl', purpose: 'user_data', content: bytes });
    expect(file).toMatchObject({ filename: 'requests é.jsonl', purpose: 'user_data', bytes: BigInt(bytes.length) });
    expect(file.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Math.abs(timestampDate(file.createdAt!).getTime() - Date.now())).toBeLessThan(60_000);
    expect(file.expiresAt).toBeUndefined();
    expect(readFileSync(blobPath(team, file.id))).toEqual(bytes);

    expect((await client.getFile({ caller: caller(team), fileId: file.id })).file).toEqual(file);
    expect((await client.listFiles({ caller: caller(team) })).files).toEqual([file]);
    const content = await client.getFileContent({ caller: caller(team), fileId: file.id });
    expect(content.file).toEqual(file);
    expect(Buffer.from(content.content)).toEqual(bytes);

    expect(await client.deleteFile({ caller: caller(team), fileId: file.id })).toMatchObject({ fileId: file.id });
    expect(existsSync(blobPath(team, file.id))).toBe(false);
    for (const call of [
      client.getFile({ caller: caller(team), fileId: file.id }),
      client.getFileContent({ caller: caller(team), fileId: file.id }),
      client.deleteFile({ caller: caller(team), fileId: file.id }),
    ])
      expect(await rpcError(call)).toMatchObject({
        kind: 'NotFound',
        reason: 'FILE_NOT_FOUND',
        message: `File '${file.id}' was not found.`,
      });
    expect((await client.listFiles({ caller: caller(team) })).files).toEqual([]);
  });

  it('when files are listed, then the purpose filter, both orders, the after_id cursor and has_more page through them', async () => {
    const team = randomUUID();
    const files: StoredFile[] = [];
    for (let i = 0; i < 5; i++) {
      files.push(await upload(team, { filename: `f${i}.jsonl`, purpose: i % 2 ? 'evals' : 'batch' }));
      // Distinct created_at milliseconds, so the expected order does not hang on ids within one millisecond.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const ids = (list: StoredFile[]) => list.map((f) => f.filename);
    const list = (page: { limit?: number; afterId?: string; ascending?: boolean; purpose?: string }) =>
      client.listFiles({ caller: caller(team), ...page });

    expect(await list({})).toMatchObject({ hasMore: false });
    expect(ids((await list({})).files)).toEqual(['f4.jsonl', 'f3.jsonl', 'f2.jsonl', 'f1.jsonl', 'f0.jsonl']);
    expect(ids((await list({ purpose: 'batch', ascending: true })).files)).toEqual([
      'f0.jsonl',
      'f2.jsonl',
      'f4.jsonl',
    ]);
    expect(ids((await list({ purpose: 'evals' })).files)).toEqual(['f3.jsonl', 'f1.jsonl']);

    const newest = await list({ limit: 2 });
    expect([ids(newest.files), newest.hasMore]).toEqual([['f4.jsonl', 'f3.jsonl'], true]);
    const middle = await list({ limit: 2, afterId: newest.files[1]!.id });
    expect([ids(middle.files), middle.hasMore]).toEqual([['f2.jsonl', 'f1.jsonl'], true]);
    const last = await list({ limit: 2, afterId: middle.files[1]!.id });
    expect([ids(last.files), last.hasMore]).toEqual([['f0.jsonl'], false]);

    const oldest = await list({ limit: 3, ascending: true });
    expect([ids(oldest.files), oldest.hasMore]).toEqual([['f0.jsonl', 'f1.jsonl', 'f2.jsonl'], true]);
    const rest = await list({ limit: 3, ascending: true, afterId: oldest.files[2]!.id });
    expect([ids(rest.files), rest.hasMore]).toEqual([['f3.jsonl', 'f4.jsonl'], false]);
    const batchAfter = await list({ purpose: 'batch', ascending: true, limit: 1, afterId: files[1]!.id });
    expect([ids(batchAfter.files), batchAfter.hasMore]).toEqual([['f2.jsonl'], true]);
    expect(await list({ afterId: files[0]!.id })).toMatchObject({ files: [], hasMore: false });

    const other = await upload(randomUUID());
    for (const [page, field] of [
      [{ afterId: randomUUID() }, 'after_id'],
      [{ afterId: other.id }, 'after_id'],
      [{ afterId: 'file-abc' }, 'after_id'],
      [{ limit: 10_001 }, 'limit'],
      [{ limit: -1 }, 'limit'],
      [{ purpose: 'training' }, 'purpose'],
    ] as const)
      expect(await rpcError(list(page))).toMatchObject({ kind: 'InvalidArgument', fieldErrors: [{ field }] });
  });

  it('when another team asks for a file by its id, then it is NotFound as if it did not exist, and the file stays', async () => {
    const owner = randomUUID();
    const stranger = randomUUID();
    const file = await upload(owner);
    const notFound = { kind: 'NotFound', reason: 'FILE_NOT_FOUND', message: `File '${file.id}' was not found.` };
    expect(await rpcError(client.getFile({ caller: caller(stranger), fileId: file.id }))).toMatchObject(notFound);
    expect(await rpcError(client.getFileContent({ caller: caller(stranger), fileId: file.id }))).toMatchObject(
      notFound,
    );
    expect(await rpcError(client.deleteFile({ caller: caller(stranger), fileId: file.id }))).toMatchObject(notFound);
    expect((await client.listFiles({ caller: caller(stranger) })).files).toEqual([]);
    expect(await rpcError(client.getFile({ caller: caller(owner), fileId: 'not-a-uuid' }))).toMatchObject({
      reason: 'FILE_NOT_FOUND',
      message: "File 'not-a-uuid' was not found.",
    });
    expect(await rpcError(client.getFile({ caller: caller(owner), fileId: randomUUID() }))).toMatchObject({
      reason: 'FILE_NOT_FOUND',
    });
    expect((await client.getFile({ caller: caller(owner), fileId: file.id })).file).toEqual(file);
    expect(existsSync(blobPath(owner, file.id))).toBe(true);
  });

  it('when an upload is not allowed, then the error names the field and nothing is stored', async () => {
    const team = randomUUID();
    const cases: [Parameters<typeof upload>[1], string, RegExp][] = [
      [{ purpose: 'training' }, 'purpose', /batch, fine-tune, assistants, vision, user_data, evals/],
      [{ purpose: '' }, 'purpose', /must be one of/],
      [{ filename: '' }, 'filename', /1 to 255 characters/],
      [{ filename: 'x'.repeat(256) }, 'filename', /1 to 255 characters/],
      [{ filename: 'dir/input.jsonl' }, 'filename', /"\/"/],
      [{ filename: 'input\n.jsonl' }, 'filename', /control characters/],
      [{ filename: 'input\u0000.jsonl' }, 'filename', /control characters/],
      [{ content: new Uint8Array() }, 'file', /is empty/],
      [{ expiresAfterSeconds: 60n }, 'expires_after_seconds', /3600 to 2592000/],
      [{ expiresAfterSeconds: 2_592_001n }, 'expires_after_seconds', /3600 to 2592000/],
      [{ expiresAfterSeconds: -3600n }, 'expires_after_seconds', /3600 to 2592000/],
    ];
    for (const [fields, field, message] of cases) {
      const err = await rpcError(upload(team, fields));
      expect(err).toMatchObject({ kind: 'InvalidArgument', reason: 'VALIDATION_FAILED', fieldErrors: [{ field }] });
      expect(err.fieldErrors[0]!.message).toMatch(message);
    }
    expect(await rpcError(upload(team, { content: new Uint8Array(MAX_BYTES + 1) }))).toMatchObject({
      kind: 'PayloadTooLarge',
      reason: 'PAYLOAD_TOO_LARGE',
      fieldErrors: [{ field: 'file' }],
    });
    expect(
      await rpcError(client.uploadFile({ filename: 'x', purpose: 'batch', content: new Uint8Array(1) })),
    ).toMatchObject({ kind: 'InvalidArgument', fieldErrors: [{ field: 'caller.team_id' }] });
    expect((await client.listFiles({ caller: caller(team) })).files).toEqual([]);
    expect(existsSync(path.join(dir, 'datasets', 'files', team))).toBe(false);

    const edge = await upload(team, { filename: 'é'.repeat(255), content: new Uint8Array(MAX_BYTES).fill(7) });
    expect(edge).toMatchObject({ bytes: BigInt(MAX_BYTES) });
  });

  it('when a team’s files would outgrow its room, then concurrent uploads stop at the limit and deleting or expiry makes room', async () => {
    const team = randomUUID();
    const full = () => upload(team, { content: new Uint8Array(MAX_BYTES).fill(1) });
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, full));
    const stored = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(stored).toHaveLength(3);
    for (const o of outcomes.filter((x) => x.status === 'rejected'))
      expect(await rpcError(Promise.reject(o.reason))).toMatchObject({
        kind: 'FailedPrecondition',
        reason: 'FILE_STORAGE_FULL',
        fieldErrors: [{ field: 'file' }],
      });
    const err = await rpcError(upload(team, { content: new Uint8Array(1) }));
    expect(err.message).toContain(`hold ${TEAM_MAX_BYTES} of the ${TEAM_MAX_BYTES} bytes`);
    expect(err.message).toContain('DELETE /v1/files/{file_id}');
    // A refused upload leaves no bytes behind.
    expect(readdirSync(path.join(dir, 'datasets', 'files', team)).sort()).toEqual(stored.map((f) => f.id).sort());
    // Another team has its own room.
    expect(await upload(randomUUID(), { content: new Uint8Array(MAX_BYTES) })).toBeDefined();

    await client.deleteFile({ caller: caller(team), fileId: stored[0]!.id });
    const replaced = await full();
    await withClient(schema.serverUrl, (c) =>
      c.query(`UPDATE "${schema.name}".files SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        replaced.id,
      ]),
    );
    // Expired and not yet swept: no longer counted.
    expect(await full()).toBeDefined();
    expect(await app.sweepExpiredFiles()).toBe(1);
  });

  it('when a file has expired, then reads treat it as NotFound and the sweep deletes its record and bytes', async () => {
    const team = randomUUID();
    const expiring = await upload(team, { expiresAfterSeconds: 3600n });
    const kept = await upload(team, { expiresAfterSeconds: 0n });
    expect(timestampDate(expiring.expiresAt!).getTime() - timestampDate(expiring.createdAt!).getTime()).toBe(3_600_000);
    expect(kept.expiresAt).toBeUndefined();
    expect(await app.sweepExpiredFiles()).toBe(0);

    await withClient(schema.serverUrl, (c) =>
      c.query(`UPDATE "${schema.name}".files SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        expiring.id,
      ]),
    );
    for (const call of [
      client.getFile({ caller: caller(team), fileId: expiring.id }),
      client.getFileContent({ caller: caller(team), fileId: expiring.id }),
      client.deleteFile({ caller: caller(team), fileId: expiring.id }),
    ])
      expect(await rpcError(call)).toMatchObject({ kind: 'NotFound', reason: 'FILE_NOT_FOUND' });
    expect((await client.listFiles({ caller: caller(team) })).files.map((f) => f.id)).toEqual([kept.id]);
    expect(existsSync(blobPath(team, expiring.id))).toBe(true);

    expect(await app.sweepExpiredFiles()).toBe(1);
    expect(existsSync(blobPath(team, expiring.id))).toBe(false);
    expect(await prisma.storedFile.count({ where: { id: expiring.id } })).toBe(0);
    expect((await client.getFile({ caller: caller(team), fileId: kept.id })).file).toEqual(kept);
    expect(existsSync(blobPath(team, kept.id))).toBe(true);
  });

  it('when files were uploaded and read, then no log line holds their content', () => {
    expect(logger.lines.some((l) => l.message === 'file stored')).toBe(true);
    expect(JSON.stringify(logger.lines)).not.toContain(MARKER);
  });
});
