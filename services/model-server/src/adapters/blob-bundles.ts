import { readAll, type BlobStore } from '@whetstone/blobs';
import type { BundleSource } from '../application/ports';

/** Reads a whole bundle from the blob store (bundles are small: kilobytes to a few megabytes). */
export function blobBundles(store: BlobStore): BundleSource {
  return { read: (bucket, key) => readAll(store, bucket, key) };
}
