/** Composition root: config → adapters → buildApp → listen; drains on SIGTERM. */
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
import { Counter } from 'prom-client';
import { inProcessIngestSignal } from './adapters/ingest-signal';
import { pgIngestSignal } from './adapters/pg-ingest-signal';
import { createPrismaClient } from './adapters/prisma-client';
import { prismaHistoryStore } from './adapters/prisma-history-store';
import { buildApp } from './app';
import { loadHistoryConfig } from './config';
import { INFERENCES_CONSUMER, INFERENCES_TOPIC } from './transport/events/inference-completed.consumer';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'inference-history' });
  const config = loadHistoryConfig();
  const logger = createLogger({ service: 'inference-history', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const schema = new URL(config.DATABASE_URL).searchParams.get('schema') ?? 'history';
  // Events: our outbox → the transport (feedback.v1); inferences.v1 → one record per inference id.
  const events = startServiceEvents(config, { clientId: 'inference-history', defaultSchema: schema, logger });
  const signal = await pgIngestSignal(events.own.pool, inProcessIngestSignal(), logger);
  const app = buildApp({
    store: prismaHistoryStore(prisma),
    signal,
    now: () => new Date(),
    readWaitMs: config.HISTORY_READ_WAIT_MS,
    inFlightWindowMs: config.HISTORY_IN_FLIGHT_WINDOW_SECONDS * 1000,
    logger,
  });

  const metrics = createServiceMetrics('inference-history');
  const ingested = new Counter({
    name: 'whetstone_history_records_ingested_total',
    help: 'Inference records stored (redelivered events are not counted)',
    registers: [metrics.registry],
  });

  const ingest = async (batch: Parameters<typeof app.onInferenceEvents>[0]) => {
    ingested.inc(await app.onInferenceEvents(batch));
  };
  const inferences = await events.transport.subscribe({
    group: INFERENCES_CONSUMER,
    topics: [INFERENCES_TOPIC],
    logger,
    handler: (event) => ingest([event]),
    handleBatch: ingest,
  });

  const server = await createRpcServer({
    name: 'inference-history',
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    register: (router) => app.registerRoutes(router),
    onCall: metrics.onCall,
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  logger.info(
    { port: server.port, metricsPort: metricsServer.port, events: config.EVENTS_TRANSPORT },
    'inference-history listening',
  );

  drainOnSignals(
    logger,
    [
      () => server.close(),
      () => inferences.stop(),
      () => signal.stop(),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('inference-history', main);
