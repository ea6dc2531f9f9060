import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { FsBlobStore } from '@whetstone/blobs';
import { AppError, Reasons } from '@whetstone/errors';
import { encodeEvent, GroupCommitOutbox, PgEventLog, pgPoolFromUrl, Topics } from '@whetstone/events';
import { extractBaseModel, loadDecoder, type ExtractionModel } from '@whetstone/ml';
import { ChatBatchService, InferenceRouterService, ModelServerService } from '@whetstone/proto/inference/v1';
import { JobDeletedSchema, JobStatus, JobStatusChangedSchema } from '@whetstone/proto/training/v1';
import { createRpcClient, createRpcServer, type RpcServer } from '@whetstone/rpc';
import { createLogger } from '@whetstone/telemetry';
import {
  applyMigrations,
  createTestSchema,
  eventually,
  startFakeAnthropicUpstream,
  startFakeOpenAIUpstream,
  type FakeUpstream,
} from '@whetstone/testing';
import { blobBundles } from '@whetstone/model-server/src/adapters/blob-bundles';
import { buildApp as buildModelServer, type ModelServerApp } from '@whetstone/model-server/src/app';
import type { BundleSource } from '@whetstone/model-server/src/application/ports';
import { cachedTrainedModels } from '../../src/adapters/cached-trained-models';
import { GrpcModelFleet } from '../../src/adapters/model-fleet';
import { OutboxMetering } from '../../src/adapters/outbox-metering';
import { createPrismaClient } from '../../src/adapters/prisma-client';
import { prismaBatchStore } from '../../src/adapters/prisma-batches';
import { prismaProjectStore } from '../../src/adapters/prisma-store';
import { prismaTrainedModels } from '../../src/adapters/prisma-trained-models';
import { httpUpstreams } from '../../src/adapters/upstream';
import { buildApp } from '../../src/app';
import { BUILTIN_MODELS, Catalog, Restrictions, upstreamEntry } from '../../src/domain/catalog';
import type { UpstreamProviderConfig } from '../../src/upstream-config';
import { startTrainingConsumer } from '../../src/transport/events/training.consumer';

/**
 * The router and two model-servers as real gRPC servers, on a real Postgres
 * schema, a real Postgres event log and a real filesystem blob store. Training
 * jobs reach the router only as the orchestrator's events, published here on
 * the log; billing is a recorder. Bundles are tiny word lists, loaded by a test
 * loader: the model-server's own loader is tested with real bundles in the e2e suite.
 */
const logger = createLogger({ service: 'router-test', level: 'silent' });
export const RESTRICTED_JOB = '0b7e2c1a-0000-4000-8000-00000000a451';
export const team = { teamId: 'team-a', keyId: 'key-a', userId: 'user-a' };
/** A free-plan team without purchased credits: key-billing refuses it direct (upstream) models. */
export const freeTeam = { teamId: 'team-free', keyId: 'key-f', userId: 'user-f' };

/** Upstream prices in micro-credits per 1,000 tokens: input 3,000, output 15,000; cache per the family. */
const price = { perRequest: 0n, per1kInput: 3_000n, per1kOutput: 15_000n };
/** A third of that, for router projects' cheap candidate (`gpt-mini-fake`). */
const cheap = { perRequest: 0n, per1kInput: 1_000n, per1kOutput: 5_000n };

/**
 * The operator's providers, pointed at the fake upstreams on loopback (allowed
 * by host: 127.0.0.1), plus one at `localhost`, which is not allowed.
 */
function providers(openai: FakeUpstream, anthropic: FakeUpstream): UpstreamProviderConfig[] {
  const model = (id: string, upstreamModel: string, family: 'gpt-4' | 'claude', rates = price) => ({
    id,
    upstreamModel,
    family,
    minCacheableTokens: 4,
    defaultMaxTokens: 256,
    price: rates,
  });
  const base = { models: [] };
  return [
    {
      ...base,
      name: 'fake-openai',
      kind: 'openai',
      host: 'fake',
      baseUrl: openai.url,
      apiKey: openai.apiKey,
      models: [model('gpt-fake', 'gpt-4o-fake', 'gpt-4'), model('gpt-mini-fake', 'gpt-4o-mini-fake', 'gpt-4', cheap)],
    },
    {
      ...base,
      name: 'fake-anthropic',
      kind: 'anthropic',
      host: 'fake',
      baseUrl: anthropic.url,
      apiKey: anthropic.apiKey,
      models: [model('claude-fake', 'claude-x', 'claude')],
    },
    {
      ...base,
      name: 'private',
      kind: 'openai',
      host: 'fake',
      baseUrl: openai.url.replace('127.0.0.1', 'localhost'),
      apiKey: openai.apiKey,
      models: [model('gpt-private', 'gpt-4o-fake', 'gpt-4')],
    },
    // Nothing listens on port 1: connection refused.
    {
      ...base,
      name: 'gone',
      kind: 'openai',
      host: 'fake',
      baseUrl: 'http://127.0.0.1:1',
      apiKey: '',
      models: [model('gpt-gone', 'gone', 'gpt-4')],
    },
  ];
}

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
    extractMany(texts, schema) {
      return texts.map((t) => this.extract(t, schema));
    },
  };
}

/** A schema as the router's callers send it: JSON bytes. */
export const json = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));

/** An InferResponse's results, parsed from its JSON bytes. */
export const resultsOf = (res: { resultsJson: Uint8Array }): Record<string, unknown>[] =>
  JSON.parse(Buffer.from(res.resultsJson).toString('utf8')) as Record<string, unknown>[];

/** The typed error a call failed with (one helper for every service's tests). */
export { rpcError } from '@whetstone/testing';

async function startModelServers(gated: BundleSource) {
  const newServing = () =>
    buildModelServer({
      bundles: gated,
      loader: {
        builtin: (id) => (id === 'whetstone-extract-base' ? extractBaseModel : undefined),
        fromBundle: wordListModel,
        decoder: (bytes) => loadDecoder(bytes),
      },
      logger,
      budgetBytes: 64 * 1024 * 1024,
      batching: { windowMs: 1, maxTexts: 256 },
    });
  // Two model-servers: the router spreads base-model calls and places each trained model on one of them.
  const servings: ModelServerApp[] = [newServing(), newServing()];
  const servers: RpcServer[] = [];
  for (const [i, serving] of servings.entries())
    servers.push(
      await createRpcServer({
        name: `model-server-${i}`,
        port: 0,
        host: '127.0.0.1',
        logger,
        register: (r) => serving.registerRoutes(r),
      }),
    );
  const fleet = new GrpcModelFleet(
    servers.map((srv) => {
      const addr = `127.0.0.1:${srv.port}`;
      return { addr, client: createRpcClient(ModelServerService, { addr, caller: 'router-test', timeoutMs: 30_000 }) };
    }),
  );
  return { servings, servers, fleet };
}

/** The fake upstreams, the catalog with their models, and the real adapter (idle timeout 1.5 s) that calls them. */
async function startUpstreams() {
  const [openai, anthropic] = await Promise.all([startFakeOpenAIUpstream(), startFakeAnthropicUpstream()]);
  const configured = providers(openai, anthropic);
  return {
    openai,
    anthropic,
    catalog: new Catalog([...BUILTIN_MODELS, ...configured.flatMap((p) => p.models.map((m) => upstreamEntry(p, m)))]),
    upstreams: httpUpstreams(configured, { allowPrivateHosts: ['127.0.0.1'], idleTimeoutMs: 1_500, logger }),
  };
}

/** A recorder of credit checks; key-billing's own rule (tested in its suite) refuses a free team's direct-model calls. */
function recordingBilling() {
  const spend: bigint[] = [];
  const direct: boolean[] = [];
  const billing = {
    checkSpendable: async (teamId: string, cost: bigint, directModel: boolean) => {
      spend.push(cost);
      direct.push(directModel);
      if (directModel && teamId === freeTeam.teamId)
        throw new AppError(
          'PaymentRequired',
          Reasons.DIRECT_MODEL_REQUIRES_CREDITS,
          'Calling this model directly requires purchased credits.',
        );
    },
  };
  return { billing, spend, direct };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/** Clients of the router's two services on its port. */
function routerClients(port: number) {
  const options = { addr: `127.0.0.1:${port}`, caller: 'router-test', timeoutMs: 10_000 };
  const client: Client<typeof InferenceRouterService> = createRpcClient(InferenceRouterService, options);
  return { client, batches: createRpcClient(ChatBatchService, options) };
}

/** Starts everything; `close()` stops it and drops what it created. */
export async function startHarness() {
  const schema = await createTestSchema('router');
  await applyMigrations(schema.url, path.resolve(__dirname, '../../prisma/migrations'));
  const prisma = createPrismaClient(schema.url, { maxConnections: 4 });
  const pool = pgPoolFromUrl(schema.url, 3);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'router-test-'));
  const store = new FsBlobStore({
    root: dir,
    publicBaseUrl: 'http://localhost:1',
    signingSecret: 'router-test-secret-0123',
  });
  const [real, state] = [blobBundles(store), { gate: Promise.resolve() as Promise<void> }];
  const gated: BundleSource = { read: async (b, k) => (await state.gate, real.read(b, k)) };
  const { servings, servers, fleet } = await startModelServers(gated);
  const metering = new OutboxMetering(new GroupCommitOutbox({ pool: pool.pool, schema: schema.name, logger }));
  const { billing, spend, direct } = recordingBilling();
  const { openai, anthropic, catalog, upstreams } = await startUpstreams();
  const router = buildApp({
    catalog,
    restrictions: new Restrictions(`*:${RESTRICTED_JOB}`),
    trained: cachedTrainedModels(prismaTrainedModels(prisma), 5_000),
    billing,
    fleet,
    upstreams,
    metering,
    store: prismaProjectStore(prisma),
    batches: prismaBatchStore(prisma),
    ids: { uuid: randomUUID, ephemeral: randomUUID },
    logger,
    now: () => new Date(),
    warmTimeoutMs: 10_000,
  });
  const log = new PgEventLog(pool.pool, `${schema.name}_log`);
  const consumer = await startTrainingConsumer(log, router, logger);
  const routerServer = await createRpcServer({
    name: 'inference-router',
    port: 0,
    host: '127.0.0.1',
    logger,
    register: (r) => router.registerRoutes(r),
  });
  const { client, batches } = routerClients(routerServer.port);

  const events = jobEvents(log, prisma, store);
  return {
    ...events,
    schema,
    prisma,
    pool,
    store,
    servings,
    client,
    batches,
    router,
    metering,
    spend,
    direct,
    openai,
    anthropic,
    /** Holds every bundle read until the promise resolves. */
    setGate: (gate: Promise<void>) => void (state.gate = gate),
    async close() {
      await consumer.stop();
      await log.close();
      await pool.pool.query(`DROP SCHEMA IF EXISTS "${schema.name}_log" CASCADE`);
      await routerServer.close();
      await openai.close();
      await anthropic.close();
      for (const s of servers) await s.close();
      await metering.close();
      await prisma.$disconnect();
      await pool.pool.end();
      await schema.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What the orchestrator publishes, on the real event log, and a way to wait until the router has read it. */
function jobEvents(log: PgEventLog, prisma: ReturnType<typeof createPrismaClient>, store: FsBlobStore) {
  const publish = <T extends Parameters<typeof encodeEvent>[1]>(
    schema: T,
    message: Parameters<typeof encodeEvent<T>>[2],
    key: string,
  ) =>
    log.publish([
      { id: randomUUID(), occurredAt: new Date(), ...encodeEvent(Topics.trainingJobs, schema, message, key) },
    ]);

  const publishStatus = (
    jobId: string,
    to: JobStatus,
    opts: { teamId?: string; key?: string; at?: Date; baseModel?: string } = {},
  ) =>
    publish(
      JobStatusChangedSchema,
      create(JobStatusChangedSchema, {
        jobId,
        teamId: opts.teamId ?? team.teamId,
        toStatus: to,
        artifactBucket: opts.key ? 'artifacts' : '',
        artifactKey: opts.key ?? '',
        rootBaseModel: opts.baseModel ?? 'whetstone-extract-base',
        modelName: 'm',
        occurredAt: timestampFromDate(opts.at ?? new Date()),
      }),
      jobId,
    );
  const publishDeleted = (jobId: string, teamId = team.teamId) =>
    publish(JobDeletedSchema, create(JobDeletedSchema, { jobId, teamId }), jobId);

  /** Resolves once the read model holds the job at this status label. */
  const seen = (jobId: string, label: string) =>
    eventually(async () => (await prisma.trainedModel.findUnique({ where: { jobId } }))?.statusLabel === label);

  /** Stores a bundle (word lists, or raw text) and publishes the job at a status; resolves once the router has it. */
  const addJob = async (
    lists: Record<string, string[]> | string,
    status: JobStatus = JobStatus.COMPLETE,
    teamId = team.teamId,
    jobId: string = randomUUID(),
  ) => {
    const key = `jobs/${jobId}/bundle.json`;
    await store.put('artifacts', key, Buffer.from(typeof lists === 'string' ? lists : JSON.stringify(lists)));
    const complete = status === JobStatus.COMPLETE;
    await publishStatus(jobId, status, { teamId, ...(complete ? { key } : {}) });
    await seen(jobId, complete ? 'complete' : 'running');
    return jobId;
  };
  /** Stores a decoder adapter bundle and publishes its job complete, on whetstone-decoder-base. */
  const addDecoderJob = async (bundle: Uint8Array, jobId: string = randomUUID()) => {
    const key = `jobs/${jobId}/adapter.bin`;
    await store.put('artifacts', key, Buffer.from(bundle));
    await publishStatus(jobId, JobStatus.COMPLETE, { key, baseModel: 'whetstone-decoder-base' });
    await seen(jobId, 'complete');
    return jobId;
  };
  return { publishStatus, publishDeleted, seen, addJob, addDecoderJob };
}
