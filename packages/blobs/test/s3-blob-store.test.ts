import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { S3BlobStore, blobStoreFromEnv, blobEnvSchema } from '../src';

// s3rver speaks the S3 protocol but does not check signatures, so these tests prove the adapter's
// protocol use (put/get/list/delete, presigned PUT then GET), not that tampered URLs are refused.
describe('S3 blob store against a real S3-protocol server (s3rver)', () => {
  let dir: string;
  let s3: S3rver;
  let store: S3BlobStore;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
    s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
    const { port } = await s3.run();
    store = new S3BlobStore({ endPoint: '127.0.0.1', port, useSSL: false, accessKey: 'S3RVER', secretKey: 'S3RVER' });
  });

  afterAll(async () => {
    await s3.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when objects are put, listed, read and deleted by prefix, then the bucket reflects each step', async () => {
    await store.put('artifacts', 'job-1/weights/10', Buffer.from('ten'));
    await store.put('artifacts', 'job-1/sampler_weights/10', Buffer.from('sampler'));
    await store.put('artifacts', 'job-2/weights/1', Buffer.from('other'));
    expect(await store.stat('artifacts', 'job-1/weights/10')).toMatchObject({ size: 3 });
    const chunks: Buffer[] = [];
    for await (const c of await store.get('artifacts', 'job-1/sampler_weights/10')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('sampler');
    const keys: string[] = [];
    for await (const o of store.list('artifacts', 'job-1/')) keys.push(o.key);
    expect(keys.sort()).toEqual(['job-1/sampler_weights/10', 'job-1/weights/10']);
    expect(await store.deletePrefix('artifacts', 'job-1/')).toBe(2);
    expect(await store.stat('artifacts', 'job-1/weights/10')).toBeNull();
    expect(await store.stat('artifacts', 'job-2/weights/1')).not.toBeNull();
    await expect(store.get('artifacts', 'job-1/weights/10')).rejects.toMatchObject({ kind: 'NotFound' });
  });

  it('when a client PUTs to a presigned URL with plain fetch, then a presigned GET returns the same bytes', async () => {
    const body = Buffer.from('{"text":"Frederick H. Collier was the first colonel ."}\n');
    const put = await store.presignPut('datasets', 'team/ds/v1/raw.jsonl', { expiresInSeconds: 900 });
    expect(put.url).toMatch(/X-Amz-Signature=/);
    expect((await fetch(put.url, { method: 'PUT', body })).status).toBe(200);
    const get = await store.presignGet('datasets', 'team/ds/v1/raw.jsonl', { expiresInSeconds: 900 });
    const res = await fetch(get.url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
  });

  it('when a public endpoint is configured, then presigned URLs name it and a PUT through it lands in the bucket', async () => {
    // The service reaches the server as 127.0.0.1; clients are told localhost (as with a port-forward or a public
    // host in front of the in-cluster MinIO). S3_PUBLIC_ENDPOINT reaches the store through the config loader.
    const port = new URL((await store.presignGet('datasets', 'x/y', { expiresInSeconds: 60 })).url).port;
    const outside = blobStoreFromEnv(
      blobEnvSchema.parse({
        BLOB_STORE: 's3',
        S3_ENDPOINT: `http://127.0.0.1:${port}`,
        S3_PUBLIC_ENDPOINT: `http://localhost:${port}`,
        S3_ACCESS_KEY: 'S3RVER',
        S3_SECRET_KEY: 'S3RVER',
      }),
    );
    const put = await outside.presignPut('datasets', 'team/ds/v2/raw.jsonl', { expiresInSeconds: 900 });
    expect(new URL(put.url).host).toBe(`localhost:${port}`);
    expect((await fetch(put.url, { method: 'PUT', body: 'public\n' })).status).toBe(200);
    expect(await outside.stat('datasets', 'team/ds/v2/raw.jsonl')).toMatchObject({ size: 7 });
    const get = await outside.presignGet('datasets', 'team/ds/v2/raw.jsonl', { expiresInSeconds: 900 });
    expect(new URL(get.url).host).toBe(`localhost:${port}`);
    expect(await (await fetch(get.url)).text()).toBe('public\n');
  });

  it('when no public endpoint is configured, then presigned URLs name the service endpoint', async () => {
    const put = await store.presignPut('datasets', 'team/ds/v3/raw.jsonl', { expiresInSeconds: 900 });
    expect(new URL(put.url).hostname).toBe('127.0.0.1');
  });
});
