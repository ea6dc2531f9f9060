import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@whetstone/testing';

/** A training job as the public API returns it (the fields the journeys assert on). */
export interface Job {
  id: string;
  status: string;
  metrics?: { f1: number; precision: number; recall: number; per_label: Record<string, unknown> };
}

/** JSON over the public API with an API key; `key()` is read at call time, after sign-up. */
export function apiClient(base: () => string, key: () => string) {
  const post = (p: string, body: unknown, k = key()) =>
    fetch(`${base()}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': k },
      body: JSON.stringify(body),
    });
  const get = (p: string, k = key()) => fetch(`${base()}${p}`, { headers: { 'x-api-key': k } });
  const del = (p: string, k = key()) => fetch(`${base()}${p}`, { method: 'DELETE', headers: { 'x-api-key': k } });
  const job = async (id: string) => (await (await get(`/core/training-jobs/${id}`)).json()) as Job;
  // Training a transformer on a shared 2-core machine: generous waits (they end as soon as the state is reached).
  const until = (id: string, statuses: string[], timeoutMs = 180_000) =>
    eventually(
      async () => {
        const j = await job(id);
        return statuses.includes(j.status) ? j : null;
      },
      timeoutMs,
      200,
    );
  /** Uploads a file through a presigned URL, processes it, and waits until its first version is ready. */
  const uploadReady = async (
    dataset: { name: string; type: string; format: string; filename: string },
    body: Buffer,
  ) => {
    const { upload_url } = (await (
      await post('/core/datasets/upload/url', {
        dataset_name: dataset.name,
        dataset_type: dataset.type,
        format: dataset.format,
        filename: dataset.filename,
      })
    ).json()) as { upload_url: string };
    await fetch(upload_url, { method: 'PUT', body });
    await post('/core/datasets/upload/process', { dataset_name: dataset.name });
    await eventually(
      async () =>
        ((await (await get(`/core/datasets/${dataset.name}/1`)).json()) as { status: string }).status === 'ready',
      60_000,
    );
  };
  return { post, get, del, job, until, uploadReady };
}

/** A local Hugging Face-compatible hub that records what it receives. */
export function fakeHub() {
  const pushed: { path: string; auth: string | undefined; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      pushed.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ commitOid: 'c0ffee' }));
    });
  });
  return {
    pushed,
    async start(): Promise<string> {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
