import { Readable } from 'node:stream';
import type { BlobStore } from '@whetstone/blobs';
import { errors } from '@whetstone/errors';

/** The BlobStore port in memory; `failGets` makes every read fail with an unexpected error. */
export class MemoryBlobStore implements BlobStore {
  readonly objects = new Map<string, Buffer>();
  failGets: Error | null = null;

  async put(bucket: string, key: string, body: Buffer | Readable): Promise<{ size: number }> {
    const chunks: Buffer[] = [];
    if (Buffer.isBuffer(body)) chunks.push(body);
    else for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
    const data = Buffer.concat(chunks);
    this.objects.set(`${bucket}/${key}`, data);
    return { size: data.length };
  }

  async get(bucket: string, key: string): Promise<Readable> {
    if (this.failGets) throw this.failGets;
    const data = this.objects.get(`${bucket}/${key}`);
    if (!data) throw errors.notFound('BLOB_NOT_FOUND', `No object ${key}.`);
    return Readable.from([data]);
  }

  async stat(bucket: string, key: string) {
    const data = this.objects.get(`${bucket}/${key}`);
    return data ? { size: data.length, modifiedAt: new Date() } : null;
  }

  async delete(bucket: string, key: string): Promise<void> {
    this.objects.delete(`${bucket}/${key}`);
  }

  async deletePrefix(bucket: string, prefix: string): Promise<number> {
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(`${bucket}/${prefix}`));
    keys.forEach((k) => this.objects.delete(k));
    return keys.length;
  }

  async *list(bucket: string, prefix: string) {
    for (const [k, v] of this.objects)
      if (k.startsWith(`${bucket}/${prefix}`)) yield { key: k.slice(bucket.length + 1), size: v.length };
  }

  async presignPut(bucket: string, key: string, opts: { expiresInSeconds: number }) {
    return { url: `memory://${bucket}/${key}`, expiresAt: new Date(Date.now() + opts.expiresInSeconds * 1000) };
  }

  async presignGet(bucket: string, key: string, opts: { expiresInSeconds: number }) {
    return this.presignPut(bucket, key, opts);
  }
}
