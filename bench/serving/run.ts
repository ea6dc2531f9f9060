/**
 * Serving benchmark (issue 6): starts the whole system exactly as `pnpm start`
 * does, trains a small job through the API, then measures
 *   - native extraction through the gateway vs the same call straight to the
 *     model-server's gRPC (added p50 at c=1; throughput at c=50),
 *   - extraction p50 of a trained model on a 30-word text, in process (1 core),
 *   - cold adapter load to `active` for a new deployment,
 *   - gRPC hops per warm /inference call, from every service's RPC counters.
 *
 *   pnpm --filter @whetstone/bench bench:serving
 */
import autocannon from 'autocannon';
import { loadModel } from '@whetstone/ml';
import { ModelServerService } from '@whetstone/proto/inference/v1';
import { createRpcClient } from '@whetstone/rpc';
import { DEPLOYABLES } from '../../scripts/lib/deployables';
import { apiOf, uploadWikigold, type Api } from '../lib/api';
import { signUpWithKey, startSystem } from '../../test/e2e/system';

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

/** Background RPCs that are not part of a call: the router's placement poll, health checks, the trainers' long-poll. */
const BACKGROUND = new Set(['ListModelStates', 'Check', 'Watch', 'LeaseWork', 'Heartbeat']);

/** Every service's `<service>_rpc_handled_total`, summed over outcomes, by `service.method`. */
async function rpcCounts(portOffset: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const d of DEPLOYABLES) {
    if (!d.metricsPort || !d.port) continue;
    const text = await fetch(`http://127.0.0.1:${d.metricsPort + portOffset}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    for (const m of text.matchAll(/^\w+_rpc_handled_total\{method="([^"]+)",outcome="[^"]*"\} (\d+)/gm)) {
      const method = m[1]!.split('/').pop()!;
      if (BACKGROUND.has(method)) continue;
      const key = `${d.name}.${method}`;
      counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
    }
  }
  return counts;
}

/** RPCs each service handled per call while `calls` ran, largest first. */
async function hopsPerCall(portOffset: number, calls: number, run: () => Promise<unknown>) {
  const before = await rpcCounts(portOffset);
  for (let i = 0; i < calls; i++) await run();
  const after = await rpcCounts(portOffset);
  return [...after]
    .map(([key, n]) => [key, (n - (before.get(key) ?? 0)) / calls] as const)
    .filter(([, perCall]) => perCall > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Uploads wikigold and trains a 3-epoch job; returns it and how long it waited to start running. */
async function trainJob(api: Api): Promise<{ jobId: string; runningAfter: number }> {
  process.stderr.write('uploading wikigold and training a job (3 epochs)…\n');
  await uploadWikigold(api);
  const requestedAt = performance.now();
  const jobId = (
    await api.post('/core/training-jobs', {
      base_model: 'whetstone-extract-base',
      datasets: [{ name: 'wikigold' }],
      training_type: 'lora',
      nr_epochs: 3,
    })
  ).id as string;
  let runningAfter = 0;
  for (;;) {
    const status = (await api.get(`/core/training-jobs/${jobId}`)).status;
    if (status !== 'requested' && !runningAfter) runningAfter = performance.now() - requestedAt;
    if (status === 'complete') return { jobId, runningAfter };
    if (status === 'failed') throw new Error('training failed');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Direct gRPC to the model-server vs through the gateway (auth, rate limit, router, credit check), c=1, and the
 * RPCs every service handles per warm call. The trained job is the model here: it is fast, so the figures show the
 * serving path, not the model.
 */
async function measureServing(api: Api, jobId: string, portOffset: number) {
  const direct = createRpcClient(ModelServerService, { addr: `127.0.0.1:${50055 + portOffset}`, caller: 'bench' });
  const directCall = () =>
    direct.extract({
      model: { modelId: jobId, bucket: 'artifacts', key: `jobs/${jobId}/model.bundle` },
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
  const viaGatewayCall = () =>
    fetch(`${api.base}/inference`, { method: 'POST', headers: api.headers, body }).then((r) => r.arrayBuffer());
  const viaGateway = await timed(500, viaGatewayCall);
  const hops = await hopsPerCall(portOffset, 200, viaGatewayCall);
  const load = await autocannon({
    url: `${api.base}/inference`,
    method: 'POST',
    headers: api.headers,
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
    fetch(`${api.base}/inference`, { method: 'POST', headers: api.headers, body: baseBody }).then((r) =>
      r.arrayBuffer(),
    ),
  );
  return { directMs, viaGateway, hops, load, baseDirect, baseGateway };
}

/** Trained model on a 30-word text, in process, one core. */
async function measureInProcess(api: Api, jobId: string): Promise<number[]> {
  const bundleUrl = (await api.get(`/v1/training-jobs/${jobId}/download`)).download_url as string;
  const model = loadModel(new Uint8Array(await (await fetch(bundleUrl)).arrayBuffer()));
  return timed(2000, async () => model.extract(TEXT, SCHEMA));
}

/** Cold adapter load to active. */
async function coldDeploy(api: Api, jobId: string): Promise<number> {
  const project = (await api.post('/projects', { name: 'bench' })).id as string;
  const t0 = performance.now();
  await api.post(`/projects/${project}/deployments`, { training_job_id: jobId });
  for (;;) {
    const d = ((await api.get(`/projects/${project}/deployments`)).deployments as { status: string }[])[0];
    if (d?.status === 'active') return performance.now() - t0;
    if (d?.status === 'failed') throw new Error('deployment failed');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function report(
  s: Awaited<ReturnType<typeof measureServing>>,
  trainedMs: number[],
  coldMs: number,
  runningAfter: number,
): void {
  const words = TEXT.split(/\s+/).length;
  const f = (x: number) => x.toFixed(2);
  console.log(`serving benchmark (${words}-word text, schema of 3 entity types, 2 cores shared by all processes)`);
  console.log(
    `  trained job, straight to model-server gRPC, c=1: p50 ${f(pct(s.directMs, 50))} ms, p99 ${f(pct(s.directMs, 99))} ms`,
  );
  console.log(
    `  trained job, through the gateway /inference, c=1: p50 ${f(pct(s.viaGateway, 50))} ms, p99 ${f(pct(s.viaGateway, 99))} ms`,
  );
  console.log(`  added by gateway + router: p50 ${f(pct(s.viaGateway, 50) - pct(s.directMs, 50))} ms (target ≤1.5)`);
  console.log(
    `  trained job through the gateway, c=50 for 10 s: ${Math.round(s.load.requests.average)} req/s, p50 ${s.load.latency.p50} ms, non-2xx ${s.load.non2xx} (target ≥1.5k req/s)`,
  );
  console.log(
    `  zero-shot base: model-server p50 ${f(pct(s.baseDirect, 50))} ms, through the gateway p50 ${f(pct(s.baseGateway, 50))} ms`,
  );
  console.log(
    `  trained model in process (1 core): p50 ${f(pct(trainedMs, 50))} ms, p99 ${f(pct(trainedMs, 99))} ms (target ≤5)`,
  );
  console.log(`  cold adapter load to active: ${Math.round(coldMs)} ms (target ≤2000)`);
  console.log(`  training: requested → running ${Math.round(runningAfter)} ms (polled every 20 ms; target ≤1000)`);
  console.log(
    `  gRPC calls per warm /inference on the trained job (200 calls): ${s.hops.map(([k, n]) => `${k} ${n.toFixed(2)}`).join(', ')}`,
  );
  console.log(`  gRPC hops per warm /inference: ${s.hops.reduce((n, [, x]) => n + x, 0).toFixed(2)} (target ≤2)`);
}

async function main(): Promise<void> {
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
    const portOffset = Number(new URL(system.baseUrl).port) - 8080;
    const api = apiOf(system.baseUrl, (await signUpWithKey(system.baseUrl, 'bench')).key);
    const { jobId, runningAfter } = await trainJob(api);
    const serving = await measureServing(api, jobId, portOffset);
    const trainedMs = await measureInProcess(api, jobId);
    const coldMs = await coldDeploy(api, jobId);
    report(serving, trainedMs, coldMs, runningAfter);
  } finally {
    await system.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
