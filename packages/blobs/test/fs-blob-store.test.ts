import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSignedUrlHandler, FsBlobStore } from '../src';

describe('filesystem blob store with signed URLs (real HTTP server)', () => {
  let root: string;
  let server: http.Server;
  let store: FsBlobStore;
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  let handler: ReturnType<typeof createSignedUrlHandler>;

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    server = http.createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    store = new FsBlobStore({
      root,
      publicBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      signingSecret: 'test-signing-secret-0123456789',
      now: () => now,
    });
    handler = createSignedUrlHandler(store);
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(root, { recursive: true, force: true });
  });

  it('when a client PUTs to a presigned URL and GETs it back, then the bytes round-trip with the signed file name', async () => {
    const body = Buffer.from('{"text":"hello"}\n'.repeat(1000));
    const put = await store.presignPut('datasets', 'team-1/ds/v1/data.jsonl', {
      expiresInSeconds: 600,
      maxBytes: 1_000_000,
    });
    const res = await fetch(put.url, { method: 'PUT', body });
    expect(res.status).toBe(200);
    // `bytes`, not `size`, which in a dataset version counts rows; a newline ends it, as a shell prompt wants.
    expect(await res.text()).toBe(`{"bytes":${body.length}}\n`);
    expect(await store.stat('datasets', 'team-1/ds/v1/data.jsonl')).toMatchObject({ size: body.length });

    const get = await store.presignGet('datasets', 'team-1/ds/v1/data.jsonl', {
      expiresInSeconds: 600,
      fileName: 'data.jsonl',
    });
    const down = await fetch(get.url);
    expect(down.status).toBe(200);
    expect(down.headers.get('content-disposition')).toBe('attachment; filename="data.jsonl"');
    expect(Buffer.from(await down.arrayBuffer()).equals(body)).toBe(true);
  });

  it('when the URL is tampered with, used with another method, or expired, then 403 {detail} says which', async () => {
    const put = await store.presignPut('datasets', 'a/b.jsonl', { expiresInSeconds: 60, maxBytes: 100 });
    const tampered = put.url.replace('a/b.jsonl', 'a/c.jsonl');
    const r1 = await fetch(tampered, { method: 'PUT', body: 'x' });
    expect(r1.status).toBe(403);
    expect(((await r1.json()) as { detail: string }).detail).toMatch(/signature/i);

    const r2 = await fetch(put.url);
    expect(r2.status).toBe(403);

    now += 61_000;
    const r3 = await fetch(put.url, { method: 'PUT', body: 'x' });
    expect(r3.status).toBe(403);
    expect(((await r3.json()) as { detail: string }).detail).toMatch(/expired/);
  });

  it('when the body exceeds the signed limit, then 413 {detail} and nothing is stored', async () => {
    const put = await store.presignPut('datasets', 'big/file.bin', { expiresInSeconds: 60, maxBytes: 10 });
    const res = await fetch(put.url, { method: 'PUT', body: Buffer.alloc(11) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: expect.stringContaining('10 bytes') });
    expect(await store.stat('datasets', 'big/file.bin')).toBeNull();
  });

  it('when a streamed (chunked) body grows past the limit, then the partial file is removed', async () => {
    const put = await store.presignPut('datasets', 'stream/file.bin', { expiresInSeconds: 60, maxBytes: 1024 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(put.url, { method: 'PUT' }, (res) => resolve(res.statusCode ?? 0));
      req.on('error', () => resolve(0));
      for (let i = 0; i < 10; i++) req.write(Buffer.alloc(512));
      req.end();
      setTimeout(() => reject(new Error('no response')), 5_000).unref();
    });
    expect([413, 0]).toContain(status);
    expect(await store.stat('datasets', 'stream/file.bin')).toBeNull();
    const leftovers: string[] = [];
    for await (const o of store.list('datasets', 'stream/')) leftovers.push(o.key);
    expect(leftovers).toEqual([]);
  });

  it('when objects are listed and deleted by prefix, then only that prefix goes', async () => {
    await store.put('artifacts', 'job-1/weights/1', Buffer.from('a'));
    await store.put('artifacts', 'job-1/weights/2', Buffer.from('bb'));
    await store.put('artifacts', 'job-2/weights/1', Buffer.from('c'));
    const listed: { key: string; size: number }[] = [];
    for await (const o of store.list('artifacts', 'job-1/')) listed.push(o);
    expect(listed).toEqual([
      { key: 'job-1/weights/1', size: 1 },
      { key: 'job-1/weights/2', size: 2 },
    ]);
    expect(await store.deletePrefix('artifacts', 'job-1/')).toBe(2);
    expect(await store.stat('artifacts', 'job-2/weights/1')).not.toBeNull();
    await expect(store.get('artifacts', 'job-1/weights/1')).rejects.toMatchObject({ kind: 'NotFound' });
  });

  it('when a key tries to escape the root, then it is refused', async () => {
    await expect(store.put('datasets', '../../etc/passwd', Buffer.from('x'))).rejects.toThrow(/invalid object key/);
    await expect(store.presignPut('datasets', 'a/../../b', { expiresInSeconds: 60 })).rejects.toThrow(
      /invalid object key/,
    );
  });
});
