import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSignedUrlHandler, FsBlobStore } from '../src';
import { describeBlobStoreContract } from './blob-store.contract';

// The contract s3.test.ts holds the S3 adapter to, against the embedded default: files on disk, URLs served by
// the signed-URL handler (as the gateway mounts it at /blobs/*).
describeBlobStoreContract('filesystem with signed URLs', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'blobs-contract-'));
  let handler: ReturnType<typeof createSignedUrlHandler> = () => undefined;
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const store = new FsBlobStore({
    root,
    publicBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    signingSecret: 'contract-signing-secret-0123456789',
  });
  handler = createSignedUrlHandler(store);
  return {
    store,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(root, { recursive: true, force: true });
    },
  };
});
