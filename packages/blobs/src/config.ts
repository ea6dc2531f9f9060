import { z } from 'zod';
import type { BlobStore } from './port';
import { FsBlobStore } from './fs-blob-store';
import { S3BlobStore } from './s3-blob-store';

/**
 * The blob-store variables every service reads, as one zod shape to spread into
 * a service's config schema: `z.object({ ...blobEnv, PORT: ... })`.
 */
export const blobEnv = {
  BLOB_STORE: z.enum(['fs', 's3']).default('fs'),
  /** fs: directory holding `<bucket>/<key>` (the embedded default). */
  BLOB_FS_ROOT: z.string().default('.data/blobs'),
  /** fs: HMAC key of signed URLs, the same on every process that signs or verifies them. */
  BLOB_SIGNING_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Where clients reach the gateway (fs signed URLs are served there). */
  PUBLIC_BASE_URL: z.string().url().default('http://localhost:8080'),
  /** Largest upload a signed URL accepts unless it names its own limit. */
  BLOB_MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(512 * 1024 * 1024),
  /** s3: endpoint URL, e.g. http://minio:9000. */
  S3_ENDPOINT: z.string().url().optional(),
  /** s3: where clients outside the cluster reach the storage; presigned URLs are signed for it. Default: S3_ENDPOINT. */
  S3_PUBLIC_ENDPOINT: z.string().url().optional(),
  S3_ACCESS_KEY: z.string().optional(),
  S3_SECRET_KEY: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
};

export const blobEnvSchema = z.object(blobEnv);
export type BlobEnv = z.infer<typeof blobEnvSchema>;

/** Build the configured store. Services that only read blobs may run without a signing secret (they cannot presign). */
export function blobStoreFromEnv(config: BlobEnv): BlobStore {
  if (config.BLOB_STORE === 's3') {
    if (!config.S3_ENDPOINT || !config.S3_ACCESS_KEY || !config.S3_SECRET_KEY)
      throw new Error('BLOB_STORE=s3 needs S3_ENDPOINT, S3_ACCESS_KEY and S3_SECRET_KEY');
    const endpoint = (value: string) => {
      const url = new URL(value);
      return {
        endPoint: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        useSSL: url.protocol === 'https:',
      };
    };
    return new S3BlobStore({
      ...endpoint(config.S3_ENDPOINT),
      ...(config.S3_PUBLIC_ENDPOINT ? { publicEndpoint: endpoint(config.S3_PUBLIC_ENDPOINT) } : {}),
      accessKey: config.S3_ACCESS_KEY,
      secretKey: config.S3_SECRET_KEY,
      region: config.S3_REGION,
      pathStyle: true,
    });
  }
  return new FsBlobStore({
    root: config.BLOB_FS_ROOT,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    // A reader without the secret gets a random one: its own URLs would simply never verify.
    signingSecret: config.BLOB_SIGNING_SECRET ?? `unsigned-${process.pid}-${Math.random().toString(36).slice(2)}`,
    maxPutBytes: config.BLOB_MAX_UPLOAD_BYTES,
  });
}
