import type { BlobStore } from '@whetstone/blobs';
import type { BundleSource } from '../application/serving';

/** Reads a whole bundle from the blob store (bundles are small: kilobytes to a few megabytes). */
export function blobBundles(store: BlobStore): BundleSource {
  return {
    async read(bucket, key) {
      const chunks: Buffer[] = [];
      for await (const chunk of await store.get(bucket, key)) chunks.push(chunk as Buffer);
      return new Uint8Array(Buffer.concat(chunks));
    },
  };
}
