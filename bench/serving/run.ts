/**
 * Serving benchmark (issues 6 and 14): starts the whole system exactly as
 * `pnpm start` does, trains two small jobs through the API, then measures
 *   - native extraction straight to the model-server's gRPC and through the
 *     gateway, side by side at c=1 and c=50 (one closed-loop load generator),
 *   - extraction of a trained model on a 30-word text in process (1 core),
 *     one text at a time and 50 texts in one extractMany batch,
 *   - cold adapter loads: a deployment of a job never called before, and
 *     LoadModel of its bundle under fresh model ids straight to the model-server,
 *   - gRPC calls per warm /inference, from every service's RPC counters.
 *
 *   pnpm --filter @whetstone/bench bench:serving
 */
import { loadModel } from '@whetstone/ml';
import { ModelServerService, ModelState } from '@whetstone/proto/inference/v1';
import { createRpcClient } from '@whetstone/rpc';
import { DEPLOYABLES } from '../../scripts/lib/deployables';
import { apiOf, uploadWikigold, type Api } from '../lib/api';
import { signUpWithKey, startSystem } from '../../test/e2e/system';
import { cpuPerCall } from './cpu';
import { closedLoop, httpPoster } from './load';
import { report } from './report';

const TEXT =
  'Ada Lovelace and Charles Babbage met at the Royal Society in London on a cold morning, and later wrote to the Analytical Engine committee in Cambridge about funding and tables.';
const SCHEMA = { entities: ['person', 'organization', 'location'] };

/** Seconds of each closed-loop run (c=1 and c=50, direct and through the gateway). */
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

export type Serving = Awaited<ReturnType<typeof measureServing>>;
export type InProcess = Awaited<ReturnType<typeof measureInProcess>>;
export type ColdLoads = Awaited<ReturnType<typeof coldLoads>>;

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

/** Submits a LoRA job on wikigold and returns its id. */
async function submitJob(api: Api, epochs: number): Promise<string> {
  const job = await api.post('/core/training-jobs', {
    base_model: 'whetstone-extract-base',
    datasets: [{ name: 'wikigold' }],
    training_type: 'lora',
    nr_epochs: epochs,
  });
  return job.id as string;
}

/** Waits until a job completes; returns how long it waited to start running. */
async function untilComplete(api: Api, jobId: string, requestedAt: number): Promise<number> {
  let runningAfter = 0;
  for (;;) {
    const status = (await api.get(`/core/training-jobs/${jobId}`)).status;
    if (status !== 'requested' && !runningAfter) runningAfter = performance.now() - requestedAt;
    if (status === 'complete') return runningAfter;
    if (status === 'failed') throw new Error('training failed');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Uploads wikigold and trains two jobs: the 3-epoch job every serving figure uses, and a 1-epoch job that nothing
 * calls before the cold deployment, so that deployment really loads its adapter for the first time.
 */
async function trainJobs(api: Api): Promise<{ jobId: string; coldJobId: string; runningAfter: number }> {
  process.stderr.write('uploading wikigold and training two jobs (3 epochs, and 1 epoch for the cold load)…\n');
  await uploadWikigold(api);
  const requestedAt = performance.now();
  const jobId = await submitJob(api, 3);
  const runningAfter = await untilComplete(api, jobId, requestedAt);
  const coldJobId = await submitJob(api, 1);
  await untilComplete(api, coldJobId, performance.now());
  return { jobId, coldJobId, runningAfter };
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/**
 * The same trained-job call straight to the model-server's gRPC and through the gateway (auth, rate limit, router,
 * credit check), at c=1 and c=50 with one load generator, and the RPCs every service handles per warm call. The
 * trained job is the model here: it is fast, so the figures show the serving path, not the model.
 */
async function measureServing(api: Api, jobId: string, portOffset: number) {
  const direct = createRpcClient(ModelServerService, { addr: `127.0.0.1:${50055 + portOffset}`, caller: 'bench' });
  const request = {
    model: { modelId: jobId, bucket: 'artifacts', key: `jobs/${jobId}/model.bundle` },
    texts: [TEXT],
    schemaJson: json(SCHEMA),
  };
  const directCall = () => direct.extract(request);
  while (
    await directCall().then(
      () => false,
      () => true,
    )
  )
    await new Promise((r) => setTimeout(r, 50));
  const inference = (modelId: string) =>
    httpPoster(`${api.base}/inference`, api.headers, JSON.stringify({ model_id: modelId, text: TEXT, schema: SCHEMA }));
  const viaGatewayCall = inference(jobId);
  const directMs = await timed(500, directCall);
  const viaGateway = await timed(500, viaGatewayCall);
  const hops = await hopsPerCall(portOffset, 200, viaGatewayCall);
  const direct1 = await closedLoop(1, LOAD_SECONDS, directCall);
  const gateway1 = await closedLoop(1, LOAD_SECONDS, viaGatewayCall);
  const direct50 = await cpuPerCall(portOffset, () => closedLoop(50, LOAD_SECONDS, directCall));
  const gateway50 = await cpuPerCall(portOffset, () => closedLoop(50, LOAD_SECONDS, viaGatewayCall));
  const load = { direct1, gateway1, direct50: direct50.result, gateway50: gateway50.result };
  const cpu = { direct50: direct50.cpu, gateway50: gateway50.cpu };
  const baseRequest = { ...request, model: { modelId: 'whetstone-extract-base', bucket: '', key: '' } };
  const baseDirect = await timed(300, () => direct.extract(baseRequest));
  const baseGateway = await timed(300, inference('whetstone-extract-base'));
  return { directMs, viaGateway, hops, load, cpu, baseDirect, baseGateway };
}

/** Trained model in process, one core: one text at a time, and 50 texts through extractMany (one forward pass). */
async function measureInProcess(api: Api, jobId: string) {
  const bundleUrl = (await api.get(`/v1/training-jobs/${jobId}/download`)).download_url as string;
  const model = loadModel(new Uint8Array(await (await fetch(bundleUrl)).arrayBuffer()));
  const one = await timed(1000, async () => model.extract(TEXT, SCHEMA));
  const texts = Array.from({ length: 50 }, () => TEXT);
  const batch = await timed(40, async () => model.extractMany(texts, SCHEMA));
  return { one, perTextInBatch: batch.map((ms) => ms / texts.length) };
}

/**
 * Cold loads. Through the API: a deployment of the job nothing has called yet, to `active`. Straight to the
 * model-server: LoadModel of the same bundle under a fresh model id each time (never held before), to READY.
 */
async function coldLoads(api: Api, coldJobId: string, portOffset: number) {
  const project = (await api.post('/projects', { name: 'bench' })).id as string;
  const t0 = performance.now();
  await api.post(`/projects/${project}/deployments`, { training_job_id: coldJobId });
  let deployMs = 0;
  while (!deployMs) {
    const d = ((await api.get(`/projects/${project}/deployments`)).deployments as { status: string }[])[0];
    if (d?.status === 'active') deployMs = performance.now() - t0;
    else if (d?.status === 'failed') throw new Error('deployment failed');
    else await new Promise((r) => setTimeout(r, 5));
  }
  const direct = createRpcClient(ModelServerService, { addr: `127.0.0.1:${50055 + portOffset}`, caller: 'bench' });
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const modelId = `cold-${i}-${Date.now()}`;
    const t = performance.now();
    const model = { modelId, bucket: 'artifacts', key: `jobs/${coldJobId}/model.bundle` };
    let state = (await direct.loadModel({ model })).state;
    while (state === ModelState.WARMING) {
      await new Promise((r) => setTimeout(r, 2));
      state = (await direct.getModelState({ modelId })).state;
    }
    if (state !== ModelState.READY) throw new Error('cold load failed');
    samples.push(performance.now() - t);
  }
  return { deployMs, samples };
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
    const { jobId, coldJobId, runningAfter } = await trainJobs(api);
    const serving = await measureServing(api, jobId, portOffset);
    const inProcess = await measureInProcess(api, jobId);
    const cold = await coldLoads(api, coldJobId, portOffset);
    report(serving, inProcess, cold, runningAfter);
  } finally {
    await system.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
