import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@whetstone/errors';
import { assertValidLocation, type BlobStore, type PresignedUrl } from './port';

export interface FsBlobStoreOptions {
  /** Directory holding `<bucket>/<key>`. */
  root: string;
  /** Where clients reach the gateway that serves `/blobs/*`, e.g. http://localhost:8080. */
  publicBaseUrl: string;
  /** HMAC-SHA256 key of the signed URLs; the same value on every process that signs or verifies. */
  signingSecret: string;
  /** Upper bound for a signed PUT that names no limit of its own. */
  maxPutBytes?: number;
  now?: () => number;
}

class TooLarge extends Error {}

/**
 * The embedded default's object storage: files on disk, written atomically,
 * and HMAC-signed expiring URLs that the gateway serves with
 * `createSignedUrlHandler`, so clients upload and download directly.
 */
export class FsBlobStore implements BlobStore {
  private readonly now: () => number;

  constructor(private readonly options: FsBlobStoreOptions) {
    if (options.signingSecret.length < 16) throw new Error('signingSecret must be at least 16 characters');
    this.now = options.now ?? Date.now;
  }

  private file(bucket: string, key: string): string {
    assertValidLocation(bucket, key);
    return path.join(this.options.root, bucket, ...key.split('/'));
  }

  async put(bucket: string, key: string, body: Buffer | Readable): Promise<{ size: number }> {
    return this.write(bucket, key, Buffer.isBuffer(body) ? Readable.from([body]) : body, Number.POSITIVE_INFINITY);
  }

  /** Stream to a temp file, fsync, then rename: readers never see a partial object. */
  private async write(bucket: string, key: string, body: Readable, maxBytes: number): Promise<{ size: number }> {
    const target = this.file(bucket, key);
    await mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${randomBytes(6).toString('hex')}.partial`;
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        done(size > maxBytes ? new TooLarge() : null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(temp));
      const handle = await open(temp, 'r+');
      await handle.sync();
      await handle.close();
      await rename(temp, target);
      return { size };
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async get(bucket: string, key: string): Promise<Readable> {
    const file = this.file(bucket, key);
    if (!(await this.stat(bucket, key)))
      throw new AppError('NotFound', 'BLOB_NOT_FOUND', `Object ${bucket}/${key} not found`);
    return createReadStream(file);
  }

  async stat(bucket: string, key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    try {
      const s = await stat(this.file(bucket, key));
      return s.isFile() ? { size: s.size, modifiedAt: s.mtime } : null;
    } catch {
      return null;
    }
  }

  async delete(bucket: string, key: string): Promise<void> {
    await rm(this.file(bucket, key), { force: true });
  }

  async deletePrefix(bucket: string, prefix: string): Promise<number> {
    let n = 0;
    for await (const { key } of this.list(bucket, prefix)) {
      await unlink(this.file(bucket, key)).catch(() => undefined);
      n++;
    }
    return n;
  }

  async *list(bucket: string, prefix: string): AsyncIterable<{ key: string; size: number }> {
    const base = path.join(this.options.root, bucket);
    const walk = async function* (dir: string): AsyncGenerator<string> {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) yield* walk(full);
        else if (!e.name.endsWith('.partial')) yield full;
      }
    };
    for await (const file of walk(base)) {
      const key = path.relative(base, file).split(path.sep).join('/');
      if (key.startsWith(prefix)) yield { key, size: (await stat(file)).size };
    }
  }

  async presignPut(
    bucket: string,
    key: string,
    opts: { expiresInSeconds: number; maxBytes?: number },
  ): Promise<PresignedUrl> {
    return this.sign('PUT', bucket, key, opts.expiresInSeconds, {
      max: String(opts.maxBytes ?? this.options.maxPutBytes ?? 5 * 1024 ** 3),
    });
  }

  async presignGet(
    bucket: string,
    key: string,
    opts: { expiresInSeconds: number; fileName?: string },
  ): Promise<PresignedUrl> {
    return this.sign('GET', bucket, key, opts.expiresInSeconds, opts.fileName ? { name: opts.fileName } : {});
  }

  private sign(
    method: 'GET' | 'PUT',
    bucket: string,
    key: string,
    expiresInSeconds: number,
    extra: Record<string, string>,
  ): PresignedUrl {
    assertValidLocation(bucket, key);
    const expires = Math.floor(this.now() / 1000) + expiresInSeconds;
    const params = new URLSearchParams({ expires: String(expires), ...extra });
    params.set('sig', this.signature(method, bucket, key, params));
    return {
      url: `${this.options.publicBaseUrl}/blobs/${bucket}/${key}?${params}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  private signature(method: string, bucket: string, key: string, params: URLSearchParams): string {
    const signed = [
      method,
      bucket,
      key,
      params.get('expires') ?? '',
      params.get('max') ?? '',
      params.get('name') ?? '',
    ].join('\n');
    return createHmac('sha256', this.options.signingSecret).update(signed).digest('base64url');
  }

  /** Verify a signed request; returns why it is refused, or null when it is good. */
  verify(
    method: string,
    bucket: string,
    key: string,
    params: URLSearchParams,
  ): { status: number; detail: string } | null {
    const given = Buffer.from(params.get('sig') ?? '');
    const expected = Buffer.from(this.signature(method, bucket, key, params));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { status: 403, detail: 'Invalid signature: the URL was altered or is not for this method.' };
    }
    if (Number(params.get('expires')) * 1000 < this.now())
      return { status: 403, detail: 'This signed URL has expired; request a new one.' };
    return null;
  }

  /** Used by the signed-URL handler for uploads. */
  async receive(
    bucket: string,
    key: string,
    body: Readable,
    maxBytes: number,
  ): Promise<{ size: number } | 'too-large'> {
    try {
      return await this.write(bucket, key, body, maxBytes);
    } catch (err) {
      if (err instanceof TooLarge) return 'too-large';
      throw err;
    }
  }
}

/**
 * The HTTP side of FsBlobStore's signed URLs, for the gateway to mount at
 * `/blobs/*`: PUT streams to disk in constant memory (413 past the signed
 * limit) and answers `{bytes}`, the bytes stored; GET streams back. Tampered
 * or expired URLs get 403 `{detail}`. Every JSON reply ends with a newline, so
 * `curl -X PUT` leaves the shell's prompt on a line of its own.
 */
export function createSignedUrlHandler(store: FsBlobStore): (req: IncomingMessage, res: ServerResponse) => void {
  const reply = (res: ServerResponse, status: number, body: object) => {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
  };
  return (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://blobs');
      const match = /^\/blobs\/([^/]+)\/(.+)$/.exec(url.pathname);
      if (!match) return reply(res, 404, { detail: 'No such object URL' });
      const [, bucket, rawKey] = match as unknown as [string, string, string];
      const key = decodeURIComponent(rawKey);
      if (req.method !== 'GET' && req.method !== 'PUT') {
        res.setHeader('allow', 'GET, PUT');
        return reply(res, 405, { detail: `Method ${req.method} is not allowed on a signed URL` });
      }
      let refusal;
      try {
        refusal = store.verify(req.method, bucket, key, url.searchParams);
      } catch {
        refusal = { status: 403, detail: 'Invalid signed URL' };
      }
      if (refusal) return reply(res, refusal.status, { detail: refusal.detail });

      if (req.method === 'PUT') {
        const max = Number(url.searchParams.get('max'));
        if (Number(req.headers['content-length'] ?? 0) > max) {
          req.resume();
          return reply(res, 413, { detail: `Upload exceeds the limit of ${max} bytes for this URL` });
        }
        const result = await store.receive(bucket, key, req, max);
        if (result === 'too-large')
          return reply(res, 413, { detail: `Upload exceeds the limit of ${max} bytes for this URL` });
        return reply(res, 200, { bytes: result.size });
      }
      const info = await store.stat(bucket, key);
      if (!info) return reply(res, 404, { detail: 'Object not found' });
      const name = url.searchParams.get('name');
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(info.size),
        ...(name ? { 'content-disposition': `attachment; filename="${name.replace(/["\\\r\n]/g, '_')}"` } : {}),
      });
      await pipeline(await store.get(bucket, key), res);
    })().catch(() => reply(res, 500, { error: 'internal_error', message: 'Blob transfer failed' }));
  };
}
