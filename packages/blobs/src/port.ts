import type { Readable } from 'node:stream';

export interface PresignedUrl {
  url: string;
  expiresAt: Date;
}

/** THE object-storage port. Buckets: `datasets`, `artifacts`. Keys are `/`-separated paths. */
export interface BlobStore {
  put(bucket: string, key: string, body: Buffer | Readable, opts?: { contentType?: string }): Promise<{ size: number }>;
  /** Rejects with NotFound (BLOB_NOT_FOUND) when missing. */
  get(bucket: string, key: string): Promise<Readable>;
  stat(bucket: string, key: string): Promise<{ size: number; modifiedAt: Date } | null>;
  delete(bucket: string, key: string): Promise<void>;
  /** Delete every object whose key starts with `prefix`; returns how many. */
  deletePrefix(bucket: string, prefix: string): Promise<number>;
  list(bucket: string, prefix: string): AsyncIterable<{ key: string; size: number }>;
  /** A URL the client PUTs the object to directly; a bearer credential, never logged. */
  presignPut(
    bucket: string,
    key: string,
    opts: { expiresInSeconds: number; maxBytes?: number; contentType?: string },
  ): Promise<PresignedUrl>;
  /** A URL the client GETs the object from directly; a bearer credential, never logged. */
  presignGet(bucket: string, key: string, opts: { expiresInSeconds: number; fileName?: string }): Promise<PresignedUrl>;
}

/** Reads a whole object into memory; for objects the caller knows are small enough (datasets, bundles, checkpoints). */
export async function readAll(store: BlobStore, bucket: string, key: string): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.get(bucket, key)) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

const KEY = /^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._\-/]{1,1024}$/;
const BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** Keys and buckets come from our services, but are checked anyway: no traversal, no surprises. */
export function assertValidLocation(bucket: string, key: string): void {
  if (!BUCKET.test(bucket)) throw new Error(`invalid bucket name: ${bucket}`);
  if (!KEY.test(key)) throw new Error(`invalid object key: ${key}`);
}
