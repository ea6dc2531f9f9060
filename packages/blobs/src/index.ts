import { FsBlobStore, type FsBlobStoreOptions } from './fs-blob-store';
import type { BlobStore } from './port';
import { S3BlobStore, type S3BlobStoreOptions } from './s3-blob-store';

export * from './port';
export { FsBlobStore, createSignedUrlHandler, type FsBlobStoreOptions } from './fs-blob-store';
export { S3BlobStore, type S3BlobStoreOptions } from './s3-blob-store';

export type BlobStoreConfig = ({ kind: 'fs' } & FsBlobStoreOptions) | ({ kind: 's3' } & S3BlobStoreOptions);

/** Pick the adapter from configuration (`BLOB_STORE`), never from the environment directly. */
export function createBlobStore(config: BlobStoreConfig): BlobStore {
  return config.kind === 's3' ? new S3BlobStore(config) : new FsBlobStore(config);
}
export * from './config';
