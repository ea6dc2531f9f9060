/** Composition root: config → adapters → buildApp → listen; resumes abandoned work; drains on SIGTERM. */
import '@whetstone/telemetry/instrument';
import { blobStoreFromEnv } from '@whetstone/blobs';
import { startServiceEvents } from '@whetstone/events';
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
import { prismaFeedbackStore } from './adapters/prisma-feedback';
import { prismaFileStore } from './adapters/prisma-files';
import { prismaDatasetStore } from './adapters/prisma-store';
import { buildApp } from './app';
import { loadDatasetConfig } from './config';
import { FEEDBACK_CONSUMER, FEEDBACK_TOPIC } from './transport/events/feedback-submitted.consumer';

/** How often versions whose processing claim expired (a crashed replica) are looked for. */
const SWEEP_MS = 20_000;
/** How often Files API files past their expiry are deleted (reads already treat them as gone). */
const FILE_SWEEP_MS = 10 * 60_000;

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'dataset' });
  const config = loadDatasetConfig();
  const logger = createLogger({ service: 'dataset', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const app = buildApp({
    store: prismaDatasetStore(prisma),
    blobs: blobStoreFromEnv(config),
    files: prismaFileStore(prisma),
    logger,
    maxUploadBytes: config.DATASET_MAX_UPLOAD_BYTES,
    maxFileBytes: config.FILE_MAX_BYTES,
    maxTeamFileBytes: config.FILE_TEAM_MAX_BYTES,
    feedback: prismaFeedbackStore(prisma),
    feedbackVersionMinRows: config.FEEDBACK_VERSION_MIN_ROWS,
  });

  // Our outbox → the transport (datasets.v1); verdicts in from feedback.v1, a batch at a time.
  const events = startServiceEvents(config, { clientId: 'dataset', defaultSchema: 'dataset', logger });
  const feedback = await events.transport.subscribe({
    group: FEEDBACK_CONSUMER,
    topics: [FEEDBACK_TOPIC],
    logger,
    handleBatch: (envelopes) => app.onFeedbackEvents(envelopes),
  });

  const metrics = createServiceMetrics('dataset');
  const server = await createRpcServer({
    name: 'dataset',
    host: config.HOST,
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    onCall: metrics.onCall,
    dependencies: events.dependencies,
    register: (router) => app.registerRoutes(router),
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  const resumed = (await app.resumeAbandoned()) + (await app.resumeGenerations());
  const sweep = setInterval(
    () => void app.resumeAbandoned().catch((err: unknown) => logger.warn({ err }, 'sweep failed')),
    SWEEP_MS,
  );
  sweep.unref();
  const fileSweep = setInterval(
    () => void app.sweepExpiredFiles().catch((err: unknown) => logger.warn({ err }, 'file sweep failed')),
    FILE_SWEEP_MS,
  );
  fileSweep.unref();
  logger.info({ port: server.port, metricsPort: metricsServer.port, resumed }, 'dataset listening');

  drainOnSignals(
    logger,
    [
      () => clearInterval(sweep),
      () => clearInterval(fileSweep),
      () => server.close(),
      () => feedback.stop(),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('dataset', main);
