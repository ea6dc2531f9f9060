/**
 * The system on S3, as the chart runs it (BLOB_STORE=s3, S3_ENDPOINT, S3_PUBLIC_ENDPOINT, S3_REGION, S3_ACCESS_KEY,
 * S3_SECRET_KEY; charts/whetstone/values.yaml): a one-node OpenStack Swift with s3api, which checks every signature
 * (@whetstone/testing's startS3Server), and `pnpm start`'s processes. One journey (presigned upload → process →
 * train → download weights), then the storage is stopped: calls that need it get 503 (never 500), and the system
 * serves them again within 10 s of its return. The figures go to docs/reliability.md ("S3 outage").
 */
import { readFileSync } from 'node:fs';
import { datasetFile, eventually } from '@whetstone/testing';
import { startS3Server, type S3Server } from '@whetstone/testing/src/swift-s3';
import { trainSmallJob } from './infra-helpers';
import { signUpWithKey, startSystem, type RunningSystem } from './system';
import { apiClient } from './training-helpers';

/** How soon after the storage is back every call must succeed again. */
const RECOVERY_BOUND_MS = 10_000;

describe('the system on a real S3 server (BLOB_STORE=s3, pnpm start)', () => {
  let s3: S3Server;
  let system: RunningSystem;
  let key: string;
  let jobId: string;
  const api = apiClient(
    () => system.baseUrl,
    () => key,
  );

  beforeAll(async () => {
    s3 = await startS3Server();
    system = await startSystem({
      env: {
        BLOB_STORE: 's3',
        S3_ENDPOINT: s3.endpoint,
        // Clients are told another name for the same storage, as behind the chart's port-forward or a public host.
        S3_PUBLIC_ENDPOINT: `http://localhost:${s3.port}`,
        S3_REGION: s3.region,
        S3_ACCESS_KEY: s3.accessKey,
        S3_SECRET_KEY: s3.secretKey,
        TRAINER_LEASE_SECONDS: '5',
      },
    });
    ({ key } = await eventually(() => signUpWithKey(system.baseUrl, 's3').catch(() => null), 60_000, 2_000));
  }, 400_000);

  afterAll(async () => {
    await system?.stop();
    await s3?.stop();
  }, 90_000);

  it('when a dataset is uploaded through a presigned S3 URL, processed and trained on, then the weights download through a presigned S3 URL', async () => {
    const url = (await (
      await api.post('/core/datasets/upload/url', {
        dataset_name: 'tampered',
        dataset_type: 'extraction',
        format: 'jsonl',
        filename: 'train.jsonl',
      })
    ).json()) as { upload_url: string };
    const signed = new URL(url.upload_url);
    expect(signed.host).toBe(`localhost:${s3.port}`);
    expect(signed.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    // The storage itself refuses an altered URL.
    const altered = new URL(signed);
    altered.pathname = altered.pathname.replace(/[^/]+$/, 'other.jsonl');
    expect((await fetch(altered, { method: 'PUT', body: '{}' })).status).toBe(403);

    jobId = await trainSmallJob(api, 's3-train');
    const download = (await (await api.get(`/v1/training-jobs/${jobId}/download`)).json()) as {
      download_url: string;
    };
    expect(new URL(download.download_url).host).toBe(`localhost:${s3.port}`);
    const weights = await fetch(download.download_url);
    expect(weights.status).toBe(200);
    expect((await weights.arrayBuffer()).byteLength).toBeGreaterThan(1_000);
    expect(system.logs()).not.toContain(new URL(download.download_url).searchParams.get('X-Amz-Signature')!);
  }, 420_000);

  it('when the S3 server is stopped, then calls that need it get 503, not 500, and they succeed again within 10 s of its return', async () => {
    const rows = readFileSync(datasetFile('wikigold/train.jsonl'), 'utf8').split('\n').slice(0, 40).join('\n');
    const { upload_url } = (await (
      await api.post('/core/datasets/upload/url', {
        dataset_name: 's3-outage',
        dataset_type: 'extraction',
        format: 'jsonl',
        filename: 'train.jsonl',
      })
    ).json()) as { upload_url: string };
    expect((await fetch(upload_url, { method: 'PUT', body: rows })).status).toBe(200);

    // Processing reads the upload, and the trained job's first inference loads its weights from the storage; a
    // checkpoint listing and a model download URL are answered without it (the URL is signed locally).
    const infer = () =>
      api.post('/inference', {
        model_id: jobId,
        text: 'Grace Hopper worked at Harvard.',
        schema: { entities: ['person'] },
      });
    const calls: [string, () => Promise<Response>][] = [
      ['process upload', () => api.post('/core/datasets/upload/process', { dataset_name: 's3-outage' })],
      ['trained-model inference', infer],
      ['checkpoints', () => api.get(`/v1/training/jobs/${jobId}/checkpoints`)],
      ['download', () => api.get(`/v1/training-jobs/${jobId}/download`)],
    ];
    await s3.kill('SIGKILL');
    const during: Record<string, number> = {};
    for (const [name, call] of calls) during[name] = (await call()).status;
    const stoppedStatuses = Object.values(during);
    process.stdout.write(`s3 outage, statuses while stopped: ${JSON.stringify(during)}\n`);
    expect(stoppedStatuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(during['process upload']).toBe(503);

    await s3.restart();
    const back = Date.now();
    const recoveredAfter: Record<string, number> = {};
    await Promise.all(
      calls.map(async ([name, call]) => {
        // Served again: a success, or for the inference also 425 (its model is loading, from the storage).
        await eventually(async () => [200, 202, 425].includes((await call()).status), 30_000, 100);
        recoveredAfter[name] = (Date.now() - back) / 1000;
      }),
    );
    process.stdout.write(`s3 outage, seconds to recover after the server is back: ${JSON.stringify(recoveredAfter)}\n`);
    for (const seconds of Object.values(recoveredAfter)) expect(seconds * 1000).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    await eventually(
      async () =>
        ((await (await api.get('/core/datasets/s3-outage/1')).json()) as { status: string }).status === 'ready',
      60_000,
    );
    await eventually(async () => (await infer()).status === 200, 120_000, 250);
  }, 300_000);
});
