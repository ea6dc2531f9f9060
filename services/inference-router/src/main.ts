/** Composition root: config → adapters → buildApp → gRPC server and event consumers; drains on SIGTERM. */
import '@whetstone/telemetry/instrument';
import { randomUUID } from 'node:crypto';
import { uuidv7 } from '@whetstone/errors';
import { GroupCommitOutbox, startServiceEvents } from '@whetstone/events';
import { ModelServerService } from '@whetstone/proto/inference/v1';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { TrainingService } from '@whetstone/proto/training/v1';
import { createRpcClient, createRpcServer } from '@whetstone/rpc';
import {
  createLogger,
  createServiceMetrics,
  drainOnSignals,
  initTelemetry,
  type Logger,
  runMain,
  startMetricsServer,
} from '@whetstone/telemetry';
import { cachedBilling } from './adapters/cached-billing';
import { cachedTrainedModels } from './adapters/cached-trained-models';
import { billingOverRpc } from './adapters/key-billing.client';
import { GrpcModelFleet } from './adapters/model-fleet';
import { resolveModelServers, watchModelServers } from './adapters/model-server-discovery';
import { OutboxMetering } from './adapters/outbox-metering';
import { prismaBatchStore } from './adapters/prisma-batches';
import { createPrismaClient } from './adapters/prisma-client';
import { prismaProjectStore } from './adapters/prisma-store';
import { prismaTrainedModels } from './adapters/prisma-trained-models';
import { httpUpstreams } from './adapters/upstream';
import { withOrchestratorFallback } from './adapters/training.client';
import { buildApp, type RouterApp } from './app';
import { loadRouterConfig, type RouterConfig } from './config';
import { BUILTIN_MODELS, Catalog, Restrictions, upstreamEntry } from './domain/catalog';
import { startTrainingConsumer } from './transport/events/training.consumer';

/** The catalog (built-ins, then the operator's upstream models) and the adapter that calls their providers. */
function providers(config: RouterConfig, logger: Logger) {
  return {
    catalog: new Catalog([
      ...BUILTIN_MODELS,
      ...config.upstreams.flatMap((p) => p.models.map((m) => upstreamEntry(p, m))),
    ]),
    upstreams: httpUpstreams(config.upstreams, {
      allowPrivateHosts: config.allowPrivateHosts,
      idleTimeoutMs: config.UPSTREAM_IDLE_TIMEOUT_MS,
      logger,
    }),
  };
}

/**
 * The model-servers: MODEL_SERVER_ADDRS resolved (a `dns:///` entry is every address of the name), polled for
 * model states, and resolved again while the service runs so replicas added or gone join or leave the fleet.
 */
async function startModelFleet(config: RouterConfig, rpc: { caller: string; logger: Logger }) {
  const member = (addr: string) => ({
    addr,
    client: createRpcClient(ModelServerService, { ...rpc, addr, timeoutMs: 30_000 }),
  });
  const modelServers = await resolveModelServers(config.modelServers);
  if (!modelServers.length) throw new Error(`no model-server address resolved from ${config.modelServers.join(',')}`);
  const fleet = new GrpcModelFleet(modelServers.map(member), { replicas: config.MODEL_PLACEMENT_REPLICAS });
  fleet.startPolling();
  const discovery = watchModelServers(
    config.modelServers,
    modelServers,
    (addrs) => fleet.setMembers(addrs.map(member)),
    {
      intervalMs: config.MODEL_SERVER_RESOLVE_SECONDS * 1000,
      logger: rpc.logger,
    },
  );
  return { fleet, discovery };
}

/** The message-batch worker, unless this replica runs none (BATCH_CONCURRENCY=0). */
function startBatchWorker(config: RouterConfig, app: RouterApp) {
  if (!config.BATCH_CONCURRENCY) return null;
  return app.startBatchWorker({
    concurrency: config.BATCH_CONCURRENCY,
    idleMs: config.BATCH_IDLE_MS,
    leaseMs: config.BATCH_LEASE_SECONDS * 1000,
    callTimeoutMs: config.BATCH_CALL_TIMEOUT_SECONDS * 1000,
    maxAttempts: config.BATCH_MAX_ATTEMPTS,
    pricePercent: config.BATCH_PRICE_PERCENT,
  });
}

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'inference-router' });
  const config = loadRouterConfig();
  const logger = createLogger({ service: 'inference-router', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const events = startServiceEvents(config, { clientId: 'inference-router', defaultSchema: 'inference', logger });
  const rpc = { caller: 'inference-router', logger };

  const { fleet, discovery } = await startModelFleet(config, rpc);
  const metrics = createServiceMetrics('inference-router');
  const metering = new OutboxMetering(
    new GroupCommitOutbox({
      pool: events.own.pool,
      schema: events.own.schema,
      logger,
      windowMs: config.METERING_COMMIT_WINDOW_MS,
      maxQueuedRows: config.METERING_MAX_QUEUED_ROWS,
      maxWaiting: config.METERING_MAX_WAITING,
      maxWaitMs: config.METERING_MAX_WAIT_MS,
      metrics: { registry: metrics.registry, prefix: 'inference_router_metering' },
    }),
  );
  const keyBilling = createRpcClient(KeyBillingService, { ...rpc, addr: config.KEY_BILLING_ADDR });
  const orchestrator = createRpcClient(TrainingService, { ...rpc, addr: config.TRAINING_ORCHESTRATOR_ADDR });
  const readModel = withOrchestratorFallback(prismaTrainedModels(prisma), orchestrator, logger);

  const app = buildApp({
    ...providers(config, logger),
    restrictions: new Restrictions(config.RESTRICTED_MODELS),
    trained: cachedTrainedModels(readModel, config.TRAINED_MODEL_CACHE_MS),
    billing: cachedBilling(billingOverRpc(keyBilling), config.SPENDABLE_CACHE_MS),
    fleet,
    metering,
    store: prismaProjectStore(prisma),
    batches: prismaBatchStore(prisma),
    // Time-ordered ids: an inference id says when it was minted, which history's read-your-writes relies on.
    ids: { uuid: () => uuidv7(), ephemeral: () => randomUUID() },
    logger,
    now: () => new Date(),
    warmTimeoutMs: config.DEPLOY_WARM_TIMEOUT_SECONDS * 1000,
  });

  const training = await startTrainingConsumer(events.transport, app, logger);
  const server = await createRpcServer({
    name: 'inference-router',
    host: config.HOST,
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    onCall: metrics.onCall,
    dependencies: events.dependencies,
    register: (r) => app.registerRoutes(r),
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  const resumed = await app.resumePendingDeployments();
  const batchWorker = startBatchWorker(config, app);
  logger.info(
    { port: server.port, metricsPort: metricsServer.port, modelServers: config.modelServers.length, resumed },
    'inference-router listening',
  );

  drainOnSignals(
    logger,
    [
      () => server.close(),
      () => batchWorker?.stop(),
      () => discovery.stop(),
      () => fleet.stop(),
      () => metering.close(),
      () => training.stop(),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('inference-router', main);
