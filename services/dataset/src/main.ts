/** Composition root: config → adapters → use cases → gRPC server; resumes abandoned work; drains on SIGTERM. */
import { blobStoreFromEnv } from '@whetstone/blobs';
import { startServiceEvents } from '@whetstone/events';
import { DatasetService } from '@whetstone/proto/src/gen/whetstone/dataset/v1/dataset_pb';
import { createRpcServer } from '@whetstone/rpc';
import { createLogger, createServiceMetrics, initTelemetry, startMetricsServer } from '@whetstone/telemetry';
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
  const datasets = new Datasets({ store: prismaDatasetStore(prisma), blobs: blobStoreFromEnv(config), logger, maxUploadBytes: config.DATASET_MAX_UPLOAD_BYTES });

  const events = startServiceEvents(config, { clientId: 'dataset', defaultSchema: 'dataset', logger });

  const metrics = createServiceMetrics('dataset');
  const server = await createRpcServer({ name: 'dataset', port: config.PORT, logger, metrics: metrics.registry, onCall: metrics.onCall, register: (r) => r.service(DatasetService, datasetHandler(datasets)) });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  const resumed = (await datasets.resumeAbandoned()) + (await datasets.resumeGenerations());
  // A process that died mid-processing leaves a claim that expires; the sweep picks its versions up.
  const sweep = setInterval(() => void datasets.resumeAbandoned().catch((err: unknown) => logger.warn({ err }, 'sweep failed')), 20_000);
  sweep.unref();
  logger.info({ port: server.port, metricsPort: metricsServer.port, resumed }, 'dataset listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    clearInterval(sweep);
    await server.close();
    await events.close();
    await metricsServer.close();
    await prisma.$disconnect();
    await telemetry.shutdown().catch(() => undefined);
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`dataset failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
