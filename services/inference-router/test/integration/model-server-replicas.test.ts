import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { trainModel } from '@whetstone/ml';
import { ModelServerService, ModelState } from '@whetstone/proto/inference/v1';
import { closeRpcChannels, createHealthChecker, createRpcClient } from '@whetstone/rpc';
import { datasetFile, eventually } from '@whetstone/testing';
import { GrpcModelFleet } from '../../src/adapters/model-fleet';
import { resolveModelServers } from '../../src/adapters/model-server-discovery';

// Two real model-server processes and a real (small) training run on 2 shared cores: generous timeouts.
jest.setTimeout(240_000);

const OPTIONS = { threshold: 0.5, includeConfidence: false, includeSpans: false };
const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

interface Replica {
  addr: string;
  metricsPort: number;
  process: ChildProcess;
  output: () => string;
}

/** One model-server exactly as `pnpm start` runs it, on its own ports, reading bundles from `blobRoot`. */
async function startModelServer(blobRoot: string): Promise<Replica> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  let output = '';
  const child = spawn(
    process.execPath,
    ['--require', 'tsx/cjs', path.join('services', 'model-server', 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        BLOB_FS_ROOT: blobRoot,
        LOG_LEVEL: 'warn',
        PRELOAD_MODELS: 'whetstone-extract-base',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  return { addr: `127.0.0.1:${port}`, metricsPort, process: child, output: () => output };
}

/** Extract calls a model-server answered so far, from its own RPC counter. */
async function extractsServed(replica: Replica): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
  return [...text.matchAll(/^\w+_rpc_handled_total\{method="[^"]*Extract",outcome="[^"]*"\} (\d+)/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

const rows = (file: string, n: number) =>
  readFileSync(datasetFile(file), 'utf8')
    .trim()
    .split('\n')
    .slice(0, n)
    .map((l) => JSON.parse(l) as { text: string; entities?: { start: number; end: number; label: string }[] });

/**
 * Issue 18's placement: the router's fleet over two model-server processes. Built-in models are served by both;
 * a trained model placed on two replicas warms on both and is then served by both.
 */
describe('the model fleet over two model-server processes', () => {
  const blobRoot = mkdtempSync(path.join(os.tmpdir(), 'whetstone-replicas-'));
  const bundleKey = `jobs/${randomUUID()}/bundle.json`;
  let replicas: Replica[] = [];

  const fleetOf = (addrs: string[], replicaCount: number) =>
    new GrpcModelFleet(
      addrs.map((addr) => ({
        addr,
        client: createRpcClient(ModelServerService, { addr, caller: 'router-test', timeoutMs: 60_000 }),
      })),
      { replicas: replicaCount },
    );
  const stateOn = (replica: Replica, modelId: string) =>
    createRpcClient(ModelServerService, { addr: replica.addr, caller: 'router-test' })
      .getModelState({ modelId })
      .then((r) => r.state);

  beforeAll(async () => {
    // A small real bundle, trained here, stored where both servers read artifacts.
    const { bundle } = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'lora',
      train: rows('wikigold/train.jsonl', 40),
      heldout: rows('wikigold/test.jsonl', 10),
      hyperparameters: { nrEpochs: 1, learningRate: 0.002, seed: 1 },
    });
    const file = path.join(blobRoot, 'artifacts', ...bundleKey.split('/'));
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, bundle);

    replicas = [await startModelServer(blobRoot), await startModelServer(blobRoot)];
    for (const replica of replicas) {
      const health = createHealthChecker({ addr: replica.addr, caller: 'router-test' });
      await eventually(
        async () => {
          if (replica.process.exitCode !== null) throw new Error(`model-server exited:\n${replica.output()}`);
          return health.check();
        },
        120_000,
        200,
      );
    }
  });

  afterAll(async () => {
    closeRpcChannels();
    await Promise.all(
      replicas.map(
        (r) =>
          new Promise<void>((resolve) => {
            if (r.process.exitCode !== null) return resolve();
            r.process.once('exit', () => resolve());
            r.process.kill('SIGTERM');
          }),
      ),
    );
    rmSync(blobRoot, { recursive: true, force: true });
  });

  it('when MODEL_SERVER_ADDRS lists both, then base-model calls are served by both', async () => {
    const addrs = await resolveModelServers(replicas.map((r) => r.addr));
    expect(addrs).toHaveLength(2);
    const fleet = fleetOf(addrs, 1);
    const before = await Promise.all(replicas.map(extractsServed));
    const ref = { modelId: 'whetstone-extract-base', bucket: '', key: '' };
    const schema = new TextEncoder().encode(JSON.stringify({ entities: ['person'] }));
    for (let i = 0; i < 10; i++) await fleet.extract(ref, ['Ada Lovelace met Charles Babbage.'], schema, OPTIONS);
    const served = (await Promise.all(replicas.map(extractsServed))).map((n, i) => n - before[i]!);
    expect(served).toEqual([5, 5]);
  });

  it('when a trained model is placed on two replicas, then it warms on both and both serve it', async () => {
    const fleet = fleetOf(
      replicas.map((r) => r.addr),
      2,
    );
    const ref = { modelId: `replicated-${randomUUID()}`, bucket: 'artifacts', key: bundleKey };
    expect(await Promise.all(replicas.map((r) => stateOn(r, ref.modelId)))).toEqual([
      ModelState.UNSPECIFIED,
      ModelState.UNSPECIFIED,
    ]);
    await fleet.warm(ref, 120_000);
    expect(await Promise.all(replicas.map((r) => stateOn(r, ref.modelId)))).toEqual([
      ModelState.READY,
      ModelState.READY,
    ]);

    const before = await Promise.all(replicas.map(extractsServed));
    const schema = new TextEncoder().encode(JSON.stringify({ entities: ['person', 'location'] }));
    for (let i = 0; i < 6; i++) await fleet.extract(ref, ['Ada Lovelace lived in London.'], schema, OPTIONS);
    const served = (await Promise.all(replicas.map(extractsServed))).map((n, i) => n - before[i]!);
    expect(served).toEqual([3, 3]);
  });

  it('when a trained model is placed on one replica, then only its rendezvous owner warms it', async () => {
    const fleet = fleetOf(
      replicas.map((r) => r.addr),
      1,
    );
    const ref = { modelId: `single-${randomUUID()}`, bucket: 'artifacts', key: bundleKey };
    await fleet.warm(ref, 120_000);
    const owner = fleet.placement(ref.modelId)[0]!.addr;
    const states = await Promise.all(replicas.map((r) => stateOn(r, ref.modelId)));
    expect(states).toEqual(replicas.map((r) => (r.addr === owner ? ModelState.READY : ModelState.UNSPECIFIED)));
  });
});
