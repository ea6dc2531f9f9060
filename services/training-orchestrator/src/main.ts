/** Composition root: config → adapters → buildApp → gRPC server, lease sweeper and event consumer; drains on SIGTERM. */
import '@whetstone/telemetry/instrument';
import { blobStoreFromEnv } from '@whetstone/blobs';
import { startServiceEvents } from '@whetstone/events';
import { DatasetService } from '@whetstone/proto/dataset/v1';
import { InferenceRouterService } from '@whetstone/proto/inference/v1';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { createRpcClient, createRpcServer } from '@whetstone/rpc';
import {
  createLogger,
  type Logger,
  createServiceMetrics,
  drainOnSignals,
  initTelemetry,
  runMain,
  startMetricsServer,
} from '@whetstone/telemetry';
import { datasetsOverRpc, feedbackVersionsOverRpc, projectsOverRpc, spendCheckOverRpc } from './adapters/collaborators';
import { hfHub } from './adapters/hf-hub';
import { inProcessWorkSignal } from './adapters/in-process-work-signal';
import { createPrismaClient } from './adapters/prisma-client';
import { PrismaAdaptationRepository, PrismaAdaptiveSettingsRepository } from './adapters/prisma-adaptive.repository';
import { PrismaCheckpointRepository } from './adapters/prisma-checkpoints.repository';
import { PrismaEvaluationRepository } from './adapters/prisma-evaluations.repository';
import { PrismaJobLogRepository } from './adapters/prisma-job-logs.repository';
import { PrismaJobRepository } from './adapters/prisma-jobs.repository';
import { systemClock } from './adapters/system-clock';
import { buildApp, type TrainingOrchestratorApp } from './app';
import { loadOrchestratorConfig } from './config';
import { DATASETS_CONSUMER, DATASETS_TOPIC } from './transport/events/datasets.consumer';
import { DEPLOYMENTS_CONSUMER, DEPLOYMENTS_TOPIC } from './transport/events/deployments.consumer';

/** The orchestrator's consumers: deployments.v1 (deployed jobs, promotions) and datasets.v1 (feedback versions). */
async function subscribe(events: ReturnType<typeof startServiceEvents>, app: TrainingOrchestratorApp, logger: Logger) {
  const deployments = await events.transport.subscribe({
    group: DEPLOYMENTS_CONSUMER,
    topics: [DEPLOYMENTS_TOPIC],
    logger,
    handler: (event) => app.onDeploymentEvent(event),
  });
  const datasets = await events.transport.subscribe({
    group: DATASETS_CONSUMER,
    topics: [DATASETS_TOPIC],
    logger,
    handler: (event) => app.onDatasetEvent(event),
  });

  return [deployments, datasets];
}

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'training-orchestrator' });
  const config = loadOrchestratorConfig();
  const logger = createLogger({ service: 'training-orchestrator', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const client = <S extends Parameters<typeof createRpcClient>[0]>(service: S, addr: string) =>
    createRpcClient(service, { addr, caller: 'training-orchestrator', logger });
  const leaseMs = config.TRAINER_LEASE_SECONDS * 1000;
  const app = buildApp({
    jobs: new PrismaJobRepository(prisma),
    logs: new PrismaJobLogRepository(prisma),
    checkpoints: new PrismaCheckpointRepository(prisma),
    evaluations: new PrismaEvaluationRepository(prisma),
    datasets: datasetsOverRpc(client(DatasetService, config.DATASET_ADDR)),
    billing: spendCheckOverRpc(client(KeyBillingService, config.KEY_BILLING_ADDR)),
    blobs: blobStoreFromEnv(config),
    clock: systemClock,
    work: inProcessWorkSignal(),
    logger,
    leaseMs,
    adaptiveSettings: new PrismaAdaptiveSettingsRepository(prisma),
    adaptations: new PrismaAdaptationRepository(prisma),
    feedbackVersions: feedbackVersionsOverRpc(client(DatasetService, config.DATASET_ADDR)),
    projects: projectsOverRpc(client(InferenceRouterService, config.INFERENCE_ROUTER_ADDR)),
    hub: config.HUB_BASE_URL
      ? hfHub({ baseUrl: config.HUB_BASE_URL, allowPrivateNetworks: config.HUB_ALLOW_PRIVATE_NETWORKS })
      : undefined,
  });

  const events = startServiceEvents(config, { clientId: 'training-orchestrator', defaultSchema: 'training', logger });
  const consumers = await subscribe(events, app, logger);

  // Never stuck in running: expired leases go back to the queue (resuming from the last checkpoint) or fail.
  const sweep = setInterval(
    () => void app.sweepLeases().catch((err: unknown) => logger.warn({ err }, 'lease sweep failed')),
    Math.min(5_000, leaseMs / 2),
  );
  sweep.unref();
  // Adaptations move on as their jobs and evaluations finish (the state is in Postgres: a restart resumes them).
  const adapt = setInterval(
    () => void app.advanceAdaptations().catch((err: unknown) => logger.warn({ err }, 'adaptation pass failed')),
    config.ADAPTATION_PASS_MS,
  );
  adapt.unref();

  const metrics = createServiceMetrics('training-orchestrator');
  const server = await createRpcServer({
    name: 'training-orchestrator',
    host: config.HOST,
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    onCall: metrics.onCall,
    dependencies: events.dependencies,
    register: (router) => app.registerRoutes(router),
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  logger.info(
    { port: server.port, metricsPort: metricsServer.port, leaseSeconds: config.TRAINER_LEASE_SECONDS },
    'training-orchestrator listening',
  );

  drainOnSignals(
    logger,
    [
      () => clearInterval(sweep),
      () => clearInterval(adapt),
      () => server.close(),
      ...consumers.map((c) => () => c.stop()),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('training-orchestrator', main);
