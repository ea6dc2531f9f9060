/**
 * What every BlobStore promises, as one suite: fs-contract.test.ts runs it against the filesystem store behind its
 * signed-URL handler, s3.test.ts against a real S3 server that checks signatures (OpenStack Swift with s3api).
 * Presigned URLs are used with plain fetch, as a client outside the system would; refusals happen at the server.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobStore } from '../src';

export interface ContractStore {
  store: BlobStore;
  close(): Promise<void>;
}

const text = async (res: Response) => Buffer.from(await res.arrayBuffer());
const readAll = async (store: BlobStore, bucket: string, key: string) => {
  const chunks: Buffer[] = [];
  for await (const c of await store.get(bucket, key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function describeBlobStoreContract(name: string, open: () => Promise<ContractStore>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let opened: ContractStore;
    let store: BlobStore;
    /** Every test writes under its own prefix, so a store shared with other runs stays apart. */
    let run: string;

    beforeAll(async () => {
      opened = await open();
      store = opened.store;
      run = `run-${randomBytes(4).toString('hex')}`;
      // A first S3 run may install Swift from apt.
    }, 400_000);

    afterAll(async () => {
      await opened?.close();
    }, 60_000);

    it('when objects are put, listed, read and deleted by prefix, then the bucket reflects each step', async () => {
      await store.put('artifacts', `${run}/job-1/weights/10`, Buffer.from('ten'));
      await store.put('artifacts', `${run}/job-1/sampler_weights/10`, Buffer.from('sampler'));
      await store.put('artifacts', `${run}/job-2/weights/1`, Buffer.from('other'));
      expect(await store.stat('artifacts', `${run}/job-1/weights/10`)).toMatchObject({ size: 3 });
      expect((await readAll(store, 'artifacts', `${run}/job-1/sampler_weights/10`)).toString()).toBe('sampler');
      const keys: string[] = [];
      for await (const o of store.list('artifacts', `${run}/job-1/`)) keys.push(o.key);
      expect(keys.sort()).toEqual([`${run}/job-1/sampler_weights/10`, `${run}/job-1/weights/10`]);
      expect(await store.deletePrefix('artifacts', `${run}/job-1/`)).toBe(2);
      expect(await store.stat('artifacts', `${run}/job-1/weights/10`)).toBeNull();
      expect(await store.stat('artifacts', `${run}/job-2/weights/1`)).not.toBeNull();
      await expect(store.get('artifacts', `${run}/job-1/weights/10`)).rejects.toMatchObject({ kind: 'NotFound' });
    });

    it('when a client PUTs to a presigned URL with plain fetch, then a presigned GET returns the same bytes', async () => {
      const body = Buffer.from('{"text":"Frederick H. Collier was the first colonel ."}\n');
      const put = await store.presignPut('datasets', `${run}/ds/v1/raw.jsonl`, { expiresInSeconds: 900 });
      expect((await fetch(put.url, { method: 'PUT', body })).status).toBe(200);
      const get = await store.presignGet('datasets', `${run}/ds/v1/raw.jsonl`, { expiresInSeconds: 900 });
      const res = await fetch(get.url);
      expect(res.status).toBe(200);
      expect((await text(res)).equals(body)).toBe(true);
    });

    it('when a presigned URL is tampered with (another key, another signature, another method), then the server refuses it with 403 and nothing changes', async () => {
      await store.put('datasets', `${run}/secret/a`, Buffer.from('mine'));
      await store.put('datasets', `${run}/secret/b`, Buffer.from('theirs'));
      const get = new URL((await store.presignGet('datasets', `${run}/secret/a`, { expiresInSeconds: 900 })).url);
      const otherKey = new URL(get.toString().replace(`${run}/secret/a`, `${run}/secret/b`));
      expect((await fetch(otherKey)).status).toBe(403);
      const forged = new URL(get);
      for (const param of ['X-Amz-Signature', 'sig'])
        if (forged.searchParams.has(param))
          forged.searchParams.set(
            param,
            forged.searchParams.get(param)!.replace(/^./, (c) => (c === '0' ? '1' : '0')),
          );
      expect((await fetch(forged)).status).toBe(403);
      // A download URL does not let anyone upload.
      expect((await fetch(get, { method: 'PUT', body: 'overwritten' })).status).toBe(403);
      const put = new URL((await store.presignPut('datasets', `${run}/secret/a`, { expiresInSeconds: 900 })).url);
      expect(
        (await fetch(put.toString().replace(`${run}/secret/a`, `${run}/secret/b`), { method: 'PUT', body: 'x' }))
          .status,
      ).toBe(403);
      expect((await readAll(store, 'datasets', `${run}/secret/a`)).toString()).toBe('mine');
      expect((await readAll(store, 'datasets', `${run}/secret/b`)).toString()).toBe('theirs');
    });

    it('when a presigned URL has expired, then the server refuses it with 403', async () => {
      await store.put('datasets', `${run}/expiring`, Buffer.from('soon gone'));
      const get = await store.presignGet('datasets', `${run}/expiring`, { expiresInSeconds: 1 });
      const put = await store.presignPut('datasets', `${run}/expiring-upload`, { expiresInSeconds: 1 });
      await sleep(2_500);
      expect((await fetch(get.url)).status).toBe(403);
      expect((await fetch(put.url, { method: 'PUT', body: 'late' })).status).toBe(403);
      expect(await store.stat('datasets', `${run}/expiring-upload`)).toBeNull();
    });

    it('when objects above 5 MB are put (a buffer, and a stream cut into multipart parts), then they read back byte for byte', async () => {
      const big = randomBytes(12 * 1024 * 1024);
      expect(await store.put('artifacts', `${run}/big/buffer`, big)).toEqual({ size: big.length });
      expect((await readAll(store, 'artifacts', `${run}/big/buffer`)).equals(big)).toBe(true);
      const chunks = [0, 1, 2, 3].map((i) => big.subarray(i * 3 * 1024 * 1024, (i + 1) * 3 * 1024 * 1024));
      expect(await store.put('artifacts', `${run}/big/weights`, Readable.from(chunks))).toEqual({ size: big.length });
      expect(await store.stat('artifacts', `${run}/big/weights`)).toMatchObject({ size: big.length });
      expect((await readAll(store, 'artifacts', `${run}/big/weights`)).equals(big)).toBe(true);
      const get = await store.presignGet('artifacts', `${run}/big/weights`, { expiresInSeconds: 900 });
      expect((await text(await fetch(get.url))).equals(big)).toBe(true);
    }, 120_000);
  });
}
