/**
 * Serving benchmark (issue 6): starts the whole system exactly as `pnpm start`
 * does, trains a small job through the API, then measures
 *   - native extraction through the gateway vs the same call straight to the
 *     model-server's gRPC (added p50 at c=1; throughput at c=50),
 *   - extraction p50 of a trained model on a 30-word text, in process (1 core),
 *   - cold adapter load to `active` for a new deployment.
 *
 *   pnpm --filter @whetstone/bench bench:serving
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { datasetsDir } from '@whetstone/testing';
import autocannon from 'autocannon';
import { loadModel } from '@whetstone/ml';
import { ModelServerService } from '@whetstone/proto/inference/v1';
import { createRpcClient } from '@whetstone/rpc';
import { signUpWithKey, startSystem } from '../../test/e2e/system';

const DATA = datasetsDir();
const TEXT =
  'Ada Lovelace and Charles Babbage met at the Royal Society in London on a cold morning, and later wrote to the Analytical Engine committee in Cambridge about funding and tables.';
const SCHEMA = { entities: ['person', 'organization', 'location'] };

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function timed(n: number, call: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 50; i++) await call();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call();
    out.push(performance.now() - t);
  }
  return out;
}

async function main(): Promise<void> {
  const offset = Number(process.env.BENCH_PORT_OFFSET ?? 700);
  process.stderr.write('starting the system…\n');
  const system = await startSystem({
    env: {
      RATE_LIMIT_INFERENCE_PER_MINUTE: '10000000',
      RATE_LIMIT_IP_PER_MINUTE: '10000000',
      RATE_LIMIT_EDGE_PER_MINUTE: '10000000',
      LOG_LEVEL: 'warn',
    },
  });
  try {
    const base = system.baseUrl;
    const port = Number(new URL(base).port);
    const modelServerAddr = `127.0.0.1:${50055 + (port - 8080)}`;
    void offset;
    const { key } = await signUpWithKey(base, 'bench');
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const post = async (p: string, body: unknown) =>
      (await fetch(`${base}${p}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<
        Record<string, unknown>
      >;
    const get = async (p: string) =>
      (await fetch(`${base}${p}`, { headers })).json() as Promise<Record<string, unknown>>;

    process.stderr.write('uploading wikigold and training a job (3 epochs)…\n');
    const url = (
      await post('/core/datasets/upload/url', {
        dataset_name: 'wikigold',
        dataset_type: 'extraction',
        format: 'jsonl',
        filename: 'train.jsonl',
      })
    ).upload_url as string;
    await fetch(url, { method: 'PUT', body: readFileSync(path.join(DATA, 'wikigold/train.jsonl')) });
    await post('/core/datasets/upload/process', { dataset_name: 'wikigold' });
    while ((await get('/core/datasets/wikigold/1')).status !== 'ready') await new Promise((r) => setTimeout(r, 100));
    const requestedAt = performance.now();
    const jobId = (
      await post('/core/training-jobs', {
        base_model: 'whetstone-extract-base',
        datasets: [{ name: 'wikigold' }],
        training_type: 'lora',
        nr_epochs: 3,
      })
    ).id as string;
    let runningAfter = 0;
    for (;;) {
      const status = (await get(`/core/training-jobs/${jobId}`)).status;
      if (status !== 'requested' && !runningAfter) runningAfter = performance.now() - requestedAt;
      if (status === 'complete') break;
      if (status === 'failed') throw new Error('training failed');
      await new Promise((r) => setTimeout(r, 20));
    }

    // Direct gRPC to the model-server vs through the gateway (auth, rate limit, router, credit check), c=1.
    // The trained job is the model here: it is fast, so the figures show the serving path, not the model.
    const direct = createRpcClient(ModelServerService, { addr: modelServerAddr, caller: 'bench' });
    const artifactKey = `jobs/${jobId}/model.bundle`;
    const directCall = () =>
      direct.extract({
        model: { modelId: jobId, bucket: 'artifacts', key: artifactKey },
        texts: [TEXT],
        schema: SCHEMA,
      });
    while (
      await directCall().then(
        () => false,
        () => true,
      )
    )
      await new Promise((r) => setTimeout(r, 50));
    const directMs = await timed(500, directCall);
    const body = JSON.stringify({ model_id: jobId, text: TEXT, schema: SCHEMA });
    const viaGateway = await timed(500, () =>
      fetch(`${base}/inference`, { method: 'POST', headers, body }).then((r) => r.arrayBuffer()),
    );
    const result = await autocannon({
      url: `${base}/inference`,
      method: 'POST',
      headers,
      body,
      connections: 50,
      duration: 10,
    });
    const baseDirect = await timed(300, () =>
      direct.extract({
        model: { modelId: 'whetstone-extract-base', bucket: '', key: '' },
        texts: [TEXT],
        schema: SCHEMA,
      }),
    );
    const baseBody = JSON.stringify({ model_id: 'whetstone-extract-base', text: TEXT, schema: SCHEMA });
    const baseGateway = await timed(300, () =>
      fetch(`${base}/inference`, { method: 'POST', headers, body: baseBody }).then((r) => r.arrayBuffer()),
    );

    // Trained model on a 30-word text, in process, one core.
    const bundleUrl = (await get(`/v1/training-jobs/${jobId}/download`)).download_url as string;
    const model = loadModel(new Uint8Array(await (await fetch(bundleUrl)).arrayBuffer()));
    const trainedMs = await timed(2000, async () => model.extract(TEXT, SCHEMA));

    // Cold adapter load to active.
    const project = (await post('/projects', { name: 'bench' })).id as string;
    const t0 = performance.now();
    await post(`/projects/${project}/deployments`, { training_job_id: jobId });
    for (;;) {
      const d = ((await get(`/projects/${project}/deployments`)).deployments as { status: string }[])[0];
      if (d?.status === 'active') break;
      if (d?.status === 'failed') throw new Error('deployment failed');
      await new Promise((r) => setTimeout(r, 5));
    }
    const coldMs = performance.now() - t0;

    const words = TEXT.split(/\s+/).length;
    const f = (x: number) => x.toFixed(2);
    console.log(`serving benchmark (${words}-word text, schema of 3 entity types, 2 cores shared by all processes)`);
    console.log(
      `  trained job, straight to model-server gRPC, c=1: p50 ${f(pct(directMs, 50))} ms, p99 ${f(pct(directMs, 99))} ms`,
    );
    console.log(
      `  trained job, through the gateway /inference, c=1: p50 ${f(pct(viaGateway, 50))} ms, p99 ${f(pct(viaGateway, 99))} ms`,
    );
    console.log(`  added by gateway + router: p50 ${f(pct(viaGateway, 50) - pct(directMs, 50))} ms (target ≤1.5)`);
    console.log(
      `  trained job through the gateway, c=50 for 10 s: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, non-2xx ${result.non2xx} (target ≥1.5k req/s)`,
    );
    console.log(
      `  zero-shot base: model-server p50 ${f(pct(baseDirect, 50))} ms, through the gateway p50 ${f(pct(baseGateway, 50))} ms`,
    );
    console.log(
      `  trained model in process (1 core): p50 ${f(pct(trainedMs, 50))} ms, p99 ${f(pct(trainedMs, 99))} ms (target ≤5)`,
    );
    console.log(`  cold adapter load to active: ${Math.round(coldMs)} ms (target ≤2000)`);
    console.log(`  training: requested → running ${Math.round(runningAfter)} ms (polled every 20 ms; target ≤1000)`);
  } finally {
    await system.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
