import { readAll, type BlobStore } from '@whetstone/blobs';
import type { Artifacts, Row } from '../application/ports';

/** Object storage for the trainer: JSONL splits in, checkpoints, bundles and manifests out. */
export function blobArtifacts(blobs: BlobStore): Artifacts {
  return {
    async readRows(bucket, key) {
      return Buffer.from(await readAll(blobs, bucket, key))
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Row);
    },
    readBytes: (bucket, key) => readAll(blobs, bucket, key),
    async put(bucket, key, bytes) {
      return (await blobs.put(bucket, key, Buffer.from(bytes))).size;
    },
  };
}
