import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { AppError, Reasons, UNAVAILABLE_RETRY_AFTER_SECONDS, asDependencyUnavailable } from '@whetstone/errors';
import { assertValidLocation, type BlobStore, type PresignedUrl } from './port';

export interface S3BlobStoreOptions {
  endPoint: string;
  port?: number;
  useSSL: boolean;
  accessKey: string;
  secretKey: string;
  region?: string;
  /** Path-style URLs (MinIO and most self-hosted S3 servers need them). */
  pathStyle?: boolean;
  /**
   * Where clients outside the cluster reach the same storage, when that differs from `endPoint` (e.g. the
   * in-cluster `minio:9000` behind `localhost:9000` or a public host). A presigned URL signs its host, so it is
   * signed for this endpoint; the service's own calls keep using `endPoint`.
   */
  publicEndpoint?: { endPoint: string; port?: number; useSSL: boolean };
  /**
   * Objects larger than this go up as S3 multipart uploads in parts of this size (the minio client's default,
   * 64 MiB, unless set; S3's smallest part is 5 MiB).
   */
  partSize?: number;
}

/** S3 error codes (and the minio client's retry message) that mean the storage cannot serve now. */
const OUTAGE = /^(ServiceUnavailable|SlowDown|InternalError|RequestTimeout)$|Retryable HTTP status: 5\d\d/;

/**
 * Storage that cannot be reached, or answers 5xx, is Unavailable (503 with Retry-After, retryable) to callers,
 * never an unknown error's 500; anything else passes through.
 */
function outageAware(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const said = [e.code, e.message].filter((v): v is string => typeof v === 'string');
  if (asDependencyUnavailable(err) || said.some((v) => OUTAGE.test(v)))
    return new AppError('Unavailable', Reasons.DEPENDENCY_UNAVAILABLE, 'Object storage is temporarily unavailable', {
      retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
      cause: err,
    });
  return err;
}

/** Runs one storage call, with outages typed as Unavailable. */
async function storage<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw outageAware(err);
  }
}

const notFound = (err: unknown) =>
  ['NoSuchKey', 'NoSuchBucket', 'NotFound'].includes(String((err as { code?: unknown })?.code));

/** S3 / MinIO object storage through the `minio` client, with real presigned URLs. */
export class S3BlobStore implements BlobStore {
  private readonly client: Client;
  /** Signs presigned URLs; the same client unless a public endpoint is configured. */
  private readonly signer: Client;
  private readonly region: string;
  private readonly ready = new Map<string, Promise<void>>();

  constructor(options: S3BlobStoreOptions) {
    this.region = options.region ?? 'us-east-1';
    this.client = new Client({
      endPoint: options.endPoint,
      ...(options.port ? { port: options.port } : {}),
      useSSL: options.useSSL,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      region: this.region,
      pathStyle: options.pathStyle ?? true,
      ...(options.partSize ? { partSize: options.partSize } : {}),
    });
    // With its region given, the minio client signs without contacting the endpoint, so it may be unreachable
    // from inside the cluster.
    this.signer = options.publicEndpoint
      ? new Client({
          endPoint: options.publicEndpoint.endPoint,
          ...(options.publicEndpoint.port ? { port: options.publicEndpoint.port } : {}),
          useSSL: options.publicEndpoint.useSSL,
          accessKey: options.accessKey,
          secretKey: options.secretKey,
          region: this.region,
          pathStyle: options.pathStyle ?? true,
        })
      : this.client;
  }

  /** Buckets are created on first use. */
  private bucket(bucket: string): Promise<void> {
    let p = this.ready.get(bucket);
    if (!p) {
      p = storage(async () => {
        if (!(await this.client.bucketExists(bucket)))
          await this.client.makeBucket(bucket, this.region).catch(async (err: unknown) => {
            if (!(await this.client.bucketExists(bucket))) throw err;
          });
      });
      p.catch(() => this.ready.delete(bucket));
      this.ready.set(bucket, p);
    }
    return p;
  }

  async put(
    bucket: string,
    key: string,
    body: Buffer | Readable,
    opts: { contentType?: string } = {},
  ): Promise<{ size: number }> {
    assertValidLocation(bucket, key);
    await this.bucket(bucket);
    return storage(async () => {
      await this.client.putObject(
        bucket,
        key,
        body,
        undefined,
        opts.contentType ? { 'Content-Type': opts.contentType } : {},
      );
      return { size: (await this.client.statObject(bucket, key)).size };
    });
  }

  async get(bucket: string, key: string): Promise<Readable> {
    assertValidLocation(bucket, key);
    try {
      return await this.client.getObject(bucket, key);
    } catch (err) {
      if (notFound(err)) throw new AppError('NotFound', 'BLOB_NOT_FOUND', `Object ${bucket}/${key} not found`);
      throw outageAware(err);
    }
  }

  async stat(bucket: string, key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    assertValidLocation(bucket, key);
    try {
      const s = await this.client.statObject(bucket, key);
      return { size: s.size, modifiedAt: s.lastModified };
    } catch (err) {
      // Missing is null; storage that cannot answer is an outage, not a missing object.
      if (notFound(err)) return null;
      throw outageAware(err);
    }
  }

  async delete(bucket: string, key: string): Promise<void> {
    assertValidLocation(bucket, key);
    await this.client.removeObject(bucket, key).catch(() => undefined);
  }

  async deletePrefix(bucket: string, prefix: string): Promise<number> {
    const keys: string[] = [];
    for await (const { key } of this.list(bucket, prefix)) keys.push(key);
    for (let i = 0; i < keys.length; i += 1000)
      await storage(() => this.client.removeObjects(bucket, keys.slice(i, i + 1000)));
    return keys.length;
  }

  async *list(bucket: string, prefix: string): AsyncIterable<{ key: string; size: number }> {
    if (!(await storage(() => this.client.bucketExists(bucket)))) return;
    try {
      for await (const item of this.client.listObjectsV2(bucket, prefix, true) as AsyncIterable<{
        name?: string;
        size: number;
      }>) {
        if (item.name) yield { key: item.name, size: item.size };
      }
    } catch (err) {
      throw outageAware(err);
    }
  }

  async presignPut(bucket: string, key: string, opts: { expiresInSeconds: number }): Promise<PresignedUrl> {
    assertValidLocation(bucket, key);
    await this.bucket(bucket);
    return {
      url: await this.signer.presignedPutObject(bucket, key, opts.expiresInSeconds),
      expiresAt: new Date(Date.now() + opts.expiresInSeconds * 1000),
    };
  }

  async presignGet(
    bucket: string,
    key: string,
    opts: { expiresInSeconds: number; fileName?: string },
  ): Promise<PresignedUrl> {
    assertValidLocation(bucket, key);
    const headers: Record<string, string> = {};
    if (opts.fileName)
      headers['response-content-disposition'] = `attachment; filename="${opts.fileName.replace(/["\\\r\n]/g, '_')}"`;
    return {
      url: await this.signer.presignedGetObject(bucket, key, opts.expiresInSeconds, headers),
      expiresAt: new Date(Date.now() + opts.expiresInSeconds * 1000),
    };
  }
}
