import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { Client } from 'minio';
import { startS3Server, type S3Server } from '../../testing/src/swift-s3';
import { S3BlobStore, blobEnvSchema, blobStoreFromEnv } from '../src';
import { describeBlobStoreContract } from './blob-store.contract';

/** 5 MiB parts (S3's smallest), so the contract's 12 MiB object goes up as a three-part multipart upload. */
const PART = 5 * 1024 * 1024;
let server: S3Server;
let starting: Promise<S3Server> | undefined;
/** One server for the file, started by whichever describe block comes first. */
const started = () => (starting ??= startS3Server().then((s) => (server = s)));

const storeOn = (s: S3Server) =>
  new S3BlobStore({
    endPoint: '127.0.0.1',
    port: s.port,
    useSSL: false,
    accessKey: s.accessKey,
    secretKey: s.secretKey,
    region: s.region,
    partSize: PART,
  });

afterAll(async () => {
  await server?.stop();
}, 60_000);

// The same contract as the filesystem store's, against OpenStack Swift's S3 API, which checks every signature.
describeBlobStoreContract('S3 (OpenStack Swift with s3api)', async () => {
  const s = await started();
  return { store: storeOn(s), close: async () => undefined };
});

describe('S3 blob store against a real S3 server (OpenStack Swift with s3api)', () => {
  let store: S3BlobStore;
  beforeAll(async () => {
    store = storeOn(await started());
  }, 400_000);

  it('when a stream is larger than the part size, then it goes up as an S3 multipart upload', async () => {
    const key = `mp-${randomBytes(3).toString('hex')}/weights`;
    const trace: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        trace.push(...chunk.toString().split('\n'));
        done();
      },
    });
    (store as unknown as { client: Client }).client.traceOn(sink);
    const body = randomBytes(2 * PART + 1024);
    // A stream of unknown length is cut into parts; a Buffer goes up in one PUT.
    expect(await store.put('artifacts', key, Readable.from([body.subarray(0, PART), body.subarray(PART)]))).toEqual({
      size: body.length,
    });
    // The parts the client sent, from its request trace: PUTs with a partNumber and an uploadId, then the
    // completion (a POST with the uploadId) that the server accepted.
    const parts = trace.filter((line) => /^REQUEST: PUT .*partNumber=\d+&uploadId=/.test(line));
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(trace.some((line) => /^REQUEST: POST .*uploadId=/.test(line))).toBe(true);
    const back: Buffer[] = [];
    for await (const c of await store.get('artifacts', key)) back.push(c as Buffer);
    expect(Buffer.concat(back).equals(body)).toBe(true);
  }, 60_000);

  it('when a public endpoint is configured, then presigned URLs name it and a PUT through it lands in the bucket', async () => {
    const outside = blobStoreFromEnv(
      blobEnvSchema.parse({
        BLOB_STORE: 's3',
        S3_ENDPOINT: `http://127.0.0.1:${server.port}`,
        S3_PUBLIC_ENDPOINT: `http://localhost:${server.port}`,
        S3_ACCESS_KEY: server.accessKey,
        S3_SECRET_KEY: server.secretKey,
      }),
    );
    const put = await outside.presignPut('datasets', 'team/ds/v2/raw.jsonl', { expiresInSeconds: 900 });
    expect(new URL(put.url).host).toBe(`localhost:${server.port}`);
    expect((await fetch(put.url, { method: 'PUT', body: 'public\n' })).status).toBe(200);
    expect(await outside.stat('datasets', 'team/ds/v2/raw.jsonl')).toMatchObject({ size: 7 });
    const get = await outside.presignGet('datasets', 'team/ds/v2/raw.jsonl', { expiresInSeconds: 900 });
    expect(new URL(get.url).host).toBe(`localhost:${server.port}`);
    expect(await (await fetch(get.url)).text()).toBe('public\n');
  });

  it('when the storage is down, then calls fail as Unavailable (retryable), and succeed again once it is back', async () => {
    await store.put('datasets', 'outage/before', Buffer.from('kept'));
    await server.kill('SIGKILL');
    const fresh = storeOn(server);
    for (const call of [
      () => store.stat('datasets', 'outage/before'),
      () => store.get('datasets', 'outage/before'),
      () => store.put('datasets', 'outage/during', Buffer.from('x')),
      () => fresh.presignPut('datasets', 'outage/url', { expiresInSeconds: 60 }),
    ])
      await expect(call()).rejects.toMatchObject({ kind: 'Unavailable', retryable: true });
    await server.restart();
    expect(await store.stat('datasets', 'outage/before')).toMatchObject({ size: 4 });
  }, 180_000);
});
