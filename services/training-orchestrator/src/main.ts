/** Composition root: config → adapters → use cases → gRPC servers, lease sweeper and event consumers; drains on SIGTERM. */
import { blobStoreFromEnv } from '@whetstone/blobs';
import { startServiceEvents } from '@whetstone/events';
import { DatasetService } from '@whetstone/proto/dataset/v1';
import { KeyBillingService } from '@whetstone/proto/keybilling/v1';
import { TrainerService, TrainingService } from '@whetstone/proto/training/v1';
import { createRpcClient, createRpcServer } from '@whetstone/rpc';
import {
  createLogger,
  createServiceMetrics,
  drainOnSignals,
  initTelemetry,
  runMain,
  startMetricsServer,
} from '@whetstone/telemetry';
import { billingOverRpc, datasetsOverRpc } from './adapters/collaborators';
import { hfHub } from './adapters/hf-hub';
import { createPrismaClient } from './adapters/prisma-client';
import { prismaJobStore } from './adapters/prisma-store';
import { Training } from './application/training';
import { loadOrchestratorConfig } from './config';
import { DEPLOYMENTS_CONSUMER, DEPLOYMENTS_TOPIC, deploymentsConsumer } from './transport/events/deployments.consumer';
import { trainerHandler, trainingHandler } from './transport/rpc/handlers';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'training-orchestrator' });
  const config = loadOrchestratorConfig();
  const logger = createLogger({ service: 'training-orchestrator', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const leaseMs = config.TRAINER_LEASE_SECONDS * 1000;
  const training = new Training({
    store: prismaJobStore(prisma),
    datasets: datasetsOverRpc(
      createRpcClient(DatasetService, { addr: config.DATASET_ADDR, caller: 'training-orchestrator', logger }),
    ),
    blobs: blobStoreFromEnv(config),
    billing: billingOverRpc(
      createRpcClient(KeyBillingService, { addr: config.KEY_BILLING_ADDR, caller: 'training-orchestrator', logger }),
      prisma,
    ),
    logger,
    leaseMs,
    ...(config.HUB_BASE_URL
      ? { hub: hfHub({ baseUrl: config.HUB_BASE_URL, allowPrivateNetworks: config.HUB_ALLOW_PRIVATE_NETWORKS }) }
      : {}),
  });

  const events = startServiceEvents(config, { clientId: 'training-orchestrator', defaultSchema: 'training', logger });
  const deployments = await events.transport.subscribe({
    group: DEPLOYMENTS_CONSUMER,
    topics: [DEPLOYMENTS_TOPIC],
    logger,
    handler: deploymentsConsumer(training),
  });

  // Never stuck in running: expired leases go back to the queue (resuming from the last checkpoint) or fail.
  const sweep = setInterval(
    () => void training.sweep().catch((err: unknown) => logger.warn({ err }, 'lease sweep failed')),
    Math.min(5_000, leaseMs / 2),
  );
  sweep.unref();

  const metrics = createServiceMetrics('training-orchestrator');
  const server = await createRpcServer({
    name: 'training-orchestrator',
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    onCall: metrics.onCall,
    register: (r) => {
      r.service(TrainingService, trainingHandler(training));
      r.service(TrainerService, trainerHandler(training, leaseMs));
    },
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  logger.info(
    { port: server.port, metricsPort: metricsServer.port, leaseSeconds: config.TRAINER_LEASE_SECONDS },
    'training-orchestrator listening',
  );

  drainOnSignals(
    logger,
    [
      () => clearInterval(sweep),
      () => server.close(),
      () => deployments.stop(),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('training-orchestrator', main);
