/** Composition root: config → adapters → use cases → gRPC server; resumes abandoned work; drains on SIGTERM. */
import { blobStoreFromEnv } from '@whetstone/blobs';
import { startServiceEvents } from '@whetstone/events';
import { DatasetService } from '@whetstone/proto/dataset/v1';
import { createRpcServer } from '@whetstone/rpc';
import {
  createLogger,
  createServiceMetrics,
  drainOnSignals,
  initTelemetry,
  runMain,
  startMetricsServer,
} from '@whetstone/telemetry';
import { createPrismaClient } from './adapters/prisma-client';
import { prismaDatasetStore } from './adapters/prisma-store';
import { Datasets } from './application/datasets';
import { loadDatasetConfig } from './config';
import { datasetHandler } from './transport/rpc/dataset.handler';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'dataset' });
  const config = loadDatasetConfig();
  const logger = createLogger({ service: 'dataset', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const datasets = new Datasets({
    store: prismaDatasetStore(prisma),
    blobs: blobStoreFromEnv(config),
    logger,
    maxUploadBytes: config.DATASET_MAX_UPLOAD_BYTES,
  });

  const events = startServiceEvents(config, { clientId: 'dataset', defaultSchema: 'dataset', logger });

  const metrics = createServiceMetrics('dataset');
  const server = await createRpcServer({
    name: 'dataset',
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    onCall: metrics.onCall,
    register: (r) => r.service(DatasetService, datasetHandler(datasets)),
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  const resumed = (await datasets.resumeAbandoned()) + (await datasets.resumeGenerations());
  // A process that died mid-processing leaves a claim that expires; the sweep picks its versions up.
  const sweep = setInterval(
    () => void datasets.resumeAbandoned().catch((err: unknown) => logger.warn({ err }, 'sweep failed')),
    20_000,
  );
  sweep.unref();
  logger.info({ port: server.port, metricsPort: metricsServer.port, resumed }, 'dataset listening');

  drainOnSignals(
    logger,
    [
      () => clearInterval(sweep),
      () => server.close(),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('dataset', main);
