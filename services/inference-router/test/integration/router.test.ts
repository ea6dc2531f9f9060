import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@connectrpc/connect';
import { FsBlobStore } from '@whetstone/blobs';
import { AppError } from '@whetstone/errors';
import { pgPoolFromUrl } from '@whetstone/events';
import { extractBaseModel, loadDecoder, type ExtractionModel } from '@whetstone/ml';
import { ModelServerService } from '@whetstone/proto/inference/v1';
import { InferenceRouterService } from '@whetstone/proto/inference/v1';
import { createRpcClient, createRpcServer, type RpcServer } from '@whetstone/rpc';
import { createLogger } from '@whetstone/telemetry';
import { applyMigrations, createTestSchema, eventually, type TestSchema } from '@whetstone/testing';
import { blobBundles } from '@whetstone/model-server/src/adapters/blob-bundles';
import { ModelServing, type BundleSource } from '@whetstone/model-server/src/application/serving';
import { modelServerHandler } from '@whetstone/model-server/src/transport/rpc/model-server.handler';
import { GrpcModelFleet } from '../../src/adapters/model-fleet';
import { OutboxMetering } from '../../src/adapters/outbox-metering';
import { createPrismaClient, type PrismaClient } from '../../src/adapters/prisma-client';
import { prismaProjectStore } from '../../src/adapters/prisma-store';
import type { TrainedModel } from '../../src/application/ports';
import { InferenceRouter } from '../../src/application/router';
import { BUILTIN_MODELS, Catalog, Restrictions } from '../../src/domain/catalog';
import { routerHandler } from '../../src/transport/rpc/router.handler';

/**
 * The router and a model-server as real gRPC servers, on a real Postgres
 * schema and a real filesystem blob store. What the router does not own is
 * behind its ports: training jobs (a map) and billing (a recorder). Bundles are
 * tiny word lists, loaded by a test loader: the model-server's own loader is
 * tested with real bundles in the e2e suite.
 */
const logger = createLogger({ service: 'router-test', level: 'silent' });
const RESTRICTED_JOB = '0b7e2c1a-0000-4000-8000-00000000a451';

/** A bundle that tags exact words: `{ label: [words] }`. */
function wordListModel(bytes: Uint8Array): ExtractionModel {
  const lists = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, string[]>;
  return {
    manifest: extractBaseModel.manifest,
    extract(text, schema) {
      const labels =
        Array.isArray(schema.entities) && schema.entities.length ? (schema.entities as string[]) : Object.keys(lists);
      return { entities: Object.fromEntries(labels.map((l) => [l, (lists[l] ?? []).filter((w) => text.includes(w))])) };
    },
  };
}

describe('inference-router with a model-server over gRPC', () => {
  let schema: TestSchema;
  let prisma: PrismaClient;
  let pool: ReturnType<typeof pgPoolFromUrl>;
  let dir: string;
  let store: FsBlobStore;
  let modelServer: RpcServer;
  let modelServer2: RpcServer;
  let servings: ModelServing[] = [];
  let routerServer: RpcServer;
  let client: Client<typeof InferenceRouterService>;
  let router: InferenceRouter;
  let metering: OutboxMetering;
  let fleet: GrpcModelFleet;
  let gate: Promise<void> = Promise.resolve();
  const jobs = new Map<string, TrainedModel>();
  const spend: bigint[] = [];
  const team = { teamId: 'team-a', keyId: 'key-a', userId: 'user-a' };

  const addJob = async (
    lists: Record<string, string[]>,
    status: TrainedModel['status'] = 'complete',
    teamId = team.teamId,
  ) => {
    const jobId = randomUUID();
    const key = `jobs/${jobId}/bundle.json`;
    await store.put('artifacts', key, Buffer.from(JSON.stringify(lists)));
    jobs.set(jobId, {
      jobId,
      teamId,
      status,
      baseModel: 'whetstone-extract-base',
      modelName: 'm',
      bundle: status === 'complete' ? { bucket: 'artifacts', key } : null,
      completedAt: new Date(),
    });
    return jobId;
  };
  const rpcError = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err as AppError;
    }
    throw new Error('expected the call to fail');
  };

  beforeAll(async () => {
    schema = await createTestSchema('router');
    await applyMigrations(schema.url, path.resolve(__dirname, '../../prisma/migrations'));
    prisma = createPrismaClient(schema.url, { maxConnections: 4 });
    pool = pgPoolFromUrl(schema.url, 3);
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-test-'));
    store = new FsBlobStore({
      root: dir,
      publicBaseUrl: 'http://localhost:1',
      signingSecret: 'router-test-secret-0123',
    });
    const real = blobBundles(store);
    const gated: BundleSource = { read: async (b, k) => (await gate, real.read(b, k)) };
    const newServing = () =>
      new ModelServing({
        bundles: gated,
        loader: {
          builtin: (id) => (id === 'whetstone-extract-base' ? extractBaseModel : undefined),
          fromBundle: wordListModel,
          decoder: (bytes) => loadDecoder(bytes),
        },
        logger,
        budgetBytes: 64 * 1024 * 1024,
      });
    // Two model-servers: the router spreads base-model calls and places each trained model on one of them.
    servings = [newServing(), newServing()];
    modelServer = await createRpcServer({
      name: 'model-server',
      port: 0,
      host: '127.0.0.1',
      logger,
      register: (r) => r.service(ModelServerService, modelServerHandler(servings[0]!)),
    });
    modelServer2 = await createRpcServer({
      name: 'model-server-2',
      port: 0,
      host: '127.0.0.1',
      logger,
      register: (r) => r.service(ModelServerService, modelServerHandler(servings[1]!)),
    });
    fleet = new GrpcModelFleet(
      [modelServer, modelServer2].map((srv) => {
        const addr = `127.0.0.1:${srv.port}`;
        return { addr, client: createRpcClient(ModelServerService, { addr, caller: 'router-test' }) };
      }),
    );
    metering = new OutboxMetering(pool.pool, schema.name, logger as never);
    router = new InferenceRouter({
      catalog: new Catalog(BUILTIN_MODELS),
      restrictions: new Restrictions(`*:${RESTRICTED_JOB}`),
      trained: {
        get: async (teamId, jobId) => (jobs.get(jobId)?.teamId === teamId ? jobs.get(jobId)! : null),
        listServable: async (teamId) =>
          [...jobs.values()].filter((j) => j.teamId === teamId && j.status === 'complete'),
      },
      billing: { checkSpendable: async (_t, cost) => void spend.push(cost) },
      fleet,
      metering,
      store: prismaProjectStore(prisma),
      ids: { uuid: randomUUID },
      logger,
      warmTimeoutMs: 10_000,
    });
    routerServer = await createRpcServer({
      name: 'inference-router',
      port: 0,
      host: '127.0.0.1',
      logger,
      register: (r) => r.service(InferenceRouterService, routerHandler(router)),
    });
    client = createRpcClient(InferenceRouterService, {
      addr: `127.0.0.1:${routerServer.port}`,
      caller: 'router-test',
      timeoutMs: 10_000,
    });
  }, 60_000);

  afterAll(async () => {
    await routerServer?.close();
    await modelServer?.close();
    await modelServer2?.close();
    await metering?.close();
    await prisma?.$disconnect();
    await pool?.pool.end();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the zero-shot base, checks spendability first, and writes UsageRecorded and InferenceCompleted to the outbox', async () => {
    const res = await client.infer({
      caller: team,
      modelId: 'whetstone-extract-base',
      texts: ['Ada Lovelace lived in London.'],
      schema: { entities: ['person', 'city'] },
      task: 'ner',
    });
    expect(res.results[0]).toEqual({ entities: { person: ['Ada Lovelace'], city: ['London'] } });
    expect(res.usage?.costMicroCredits).toBe(1_001n);
    expect(spend.length).toBeGreaterThan(0);
    await metering.flush();
    const rows = await pool.pool.query(`SELECT topic, key FROM "${schema.name}".outbox_events ORDER BY id`);
    expect(rows.rows).toEqual(
      expect.arrayContaining([
        { topic: 'billing.usage.v1', key: team.teamId },
        { topic: 'inferences.v1', key: res.inferenceId },
      ]),
    );
  });

  it('spreads base-model calls over both model-servers, and places a trained model on one of them', async () => {
    for (let i = 0; i < 4; i++)
      await client.infer({
        caller: team,
        modelId: 'whetstone-extract-base',
        texts: ['Ada Lovelace'],
        schema: { entities: ['person'] },
      });
    expect(servings.map((sv) => sv.state('whetstone-extract-base').status)).toEqual(['ready', 'ready']);
    const jobId = await addJob({ person: ['Quorra'] });
    await eventually(() =>
      client
        .infer({ caller: team, modelId: jobId, texts: ['Quorra'], schema: { entities: ['person'] } })
        .catch(() => null),
    );
    for (let i = 0; i < 4; i++)
      await client.infer({ caller: team, modelId: jobId, texts: ['Quorra'], schema: { entities: ['person'] } });
    expect(servings.filter((sv) => sv.state(jobId).status === 'ready')).toHaveLength(1);
  });

  it('names what is wrong: empty schema, unknown model, training-only base, another team’s job, a restricted model (451), a job still running', async () => {
    expect(
      (await rpcError(client.infer({ caller: team, modelId: 'whetstone-extract-base', texts: ['x'], schema: {} })))
        .reason,
    ).toBe('VALIDATION_FAILED');
    expect(
      (await rpcError(client.infer({ caller: team, modelId: 'nope', texts: ['x'], schema: { entities: ['a'] } }))).kind,
    ).toBe('NotFound');
    expect(
      (
        await rpcError(
          client.infer({ caller: team, modelId: 'whetstone-decoder-base', texts: ['x'], schema: { entities: ['a'] } }),
        )
      ).kind,
    ).toBe('FailedPrecondition');
    const foreign = await addJob({ person: ['Ada'] }, 'complete', 'team-b');
    expect(
      (await rpcError(client.infer({ caller: team, modelId: foreign, texts: ['x'], schema: { entities: ['a'] } })))
        .kind,
    ).toBe('NotFound');
    jobs.set(RESTRICTED_JOB, {
      jobId: RESTRICTED_JOB,
      teamId: team.teamId,
      status: 'complete',
      baseModel: 'whetstone-extract-base',
      modelName: 'm',
      bundle: { bucket: 'artifacts', key: 'x' },
      completedAt: new Date(),
    });
    const restricted = await rpcError(
      client.infer({ caller: team, modelId: RESTRICTED_JOB, texts: ['x'], schema: { entities: ['a'] } }),
    );
    expect(restricted).toMatchObject({ kind: 'PermissionDenied', reason: 'MODEL_RESTRICTED' });
    const running = await addJob({ person: ['Ada'] }, 'running');
    expect(
      (await rpcError(client.infer({ caller: team, modelId: running, texts: ['x'], schema: { entities: ['a'] } })))
        .kind,
    ).toBe('FailedPrecondition');
  });

  it('answers 425 MODEL_WARMING while a trained model loads, then serves its predictions', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const jobId = await addJob({ person: ['Zorblax'] });
    const warming = await rpcError(
      client.infer({ caller: team, modelId: jobId, texts: ['Zorblax waved'], schema: { entities: ['person'] } }),
    );
    expect(warming).toMatchObject({ kind: 'TooEarly', reason: 'MODEL_WARMING' });
    expect(warming.retryAfterSeconds).toBeGreaterThan(0);
    open();
    gate = Promise.resolve();
    const res = await eventually(() =>
      client
        .infer({ caller: team, modelId: jobId, texts: ['Zorblax waved'], schema: { entities: ['person'] } })
        .catch(() => null),
    );
    // The trained model knows a name the base model does not.
    expect(res.results[0]).toEqual({ entities: { person: ['Zorblax'] } });
  });

  it('deploys, replaces the active deployment with no failed call in between, and releases a deleted job', async () => {
    const project = (await client.createProject({ caller: team, name: 'tickets' })).project!;
    expect((await rpcError(client.createProject({ caller: team, name: 'tickets' }))).kind).toBe('AlreadyExists');
    expect((await rpcError(client.infer({ caller: team, projectId: project.id, texts: ['x'] }))).kind).toBe(
      'FailedPrecondition',
    );

    const first = await addJob({ thing: ['alpha'] });
    const d1 = (await client.createDeployment({ caller: team, projectId: project.id, trainingJobId: first }))
      .deployment!;
    expect(d1.status).toBe('deploying');
    await eventually(
      async () =>
        (await client.listDeployments({ caller: team, projectId: project.id })).deployments[0]?.status === 'active',
    );
    const call = () => client.infer({ caller: team, projectId: project.id, texts: ['alpha and beta'] });
    expect((await call()).results[0]).toEqual({ entities: { thing: ['alpha'] } });

    // Redeploy under load: every call succeeds, and the answers switch to the new model.
    const second = await addJob({ thing: ['beta'] });
    let failures = 0;
    let calls = 0;
    let stop = false;
    const load = (async () => {
      // Keeps calling until the switch was seen and at least 30 calls were made.
      while (!stop || calls < 30) {
        calls++;
        await call().catch(() => failures++);
      }
    })();
    await client.createDeployment({ caller: team, projectId: project.id, trainingJobId: second });
    await eventually(
      async () => ((await call()).results[0] as { entities: { thing: string[] } }).entities.thing[0] === 'beta',
    );
    stop = true;
    await load;
    expect(failures).toBe(0);
    const history = (await client.listDeployments({ caller: team, projectId: project.id })).deployments;
    expect(history.map((d) => [d.trainingJobId, d.status])).toEqual([
      [second, 'active'],
      [first, 'replaced'],
    ]);
    await metering.flush();
    const activated = await pool.pool.query(
      `SELECT count(*)::int AS n FROM "${schema.name}".outbox_events WHERE topic = 'deployments.v1'`,
    );
    expect(activated.rows[0].n).toBe(2);

    // A deleted job stops serving at once.
    expect(await router.releaseJob(second)).toBe(1);
    expect((await rpcError(call())).kind).toBe('FailedPrecondition');
  });

  it('fails a deployment whose bundle cannot load, with the reason', async () => {
    const project = (await client.createProject({ caller: team, name: 'broken' })).project!;
    const jobId = randomUUID();
    await store.put('artifacts', `jobs/${jobId}/bundle.json`, Buffer.from('not json'));
    jobs.set(jobId, {
      jobId,
      teamId: team.teamId,
      status: 'complete',
      baseModel: 'whetstone-extract-base',
      modelName: 'm',
      bundle: { bucket: 'artifacts', key: `jobs/${jobId}/bundle.json` },
      completedAt: new Date(),
    });
    await client.createDeployment({ caller: team, projectId: project.id, trainingJobId: jobId });
    const failed = await eventually(async () => {
      const d = (await client.listDeployments({ caller: team, projectId: project.id })).deployments[0];
      return d?.status === 'failed' ? d : null;
    });
    expect(failed.reason).toMatch(/could not load|JSON/);
  });

  it('deletes a project so its endpoint stops at once, and hides it from other teams', async () => {
    const project = (await client.createProject({ caller: team, name: 'short-lived' })).project!;
    expect(
      (await rpcError(client.deleteProject({ caller: { ...team, teamId: 'team-b' }, projectId: project.id }))).kind,
    ).toBe('NotFound');
    await client.deleteProject({ caller: team, projectId: project.id });
    expect((await rpcError(client.infer({ caller: team, projectId: project.id, texts: ['x'] }))).kind).toBe('NotFound');
  });
});
