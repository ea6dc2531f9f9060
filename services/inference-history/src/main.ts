/** Composition root: config → adapters → buildApp → listen; drains on SIGTERM. */
import '@whetstone/telemetry/instrument';
import { startServiceEvents } from '@whetstone/events';
import { InferenceRouterService } from '@whetstone/proto/inference/v1';
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
import { Counter } from 'prom-client';
import { builtinJudgeOverRouter } from './adapters/builtin-judge';
import { llmJudgeOverRouter } from './adapters/llm-judge';
import { inProcessIngestSignal } from './adapters/ingest-signal';
import { pgIngestSignal } from './adapters/pg-ingest-signal';
import { createPrismaClient } from './adapters/prisma-client';
import { prismaHistoryStore } from './adapters/prisma-history-store';
import { prismaConversationStore } from './adapters/prisma-conversations';
import { prismaJudgeStore } from './adapters/prisma-judge-store';
import { buildApp } from './app';
import { startJudgeWorker } from './application/judge-pending';
import type { JudgeStore } from './application/ports';
import { loadHistoryConfig, type HistoryConfig } from './config';
import { INFERENCES_CONSUMER, INFERENCES_TOPIC } from './transport/events/inference-completed.consumer';

/** The judge worker: sampled records are queued at ingest; both judges ask the router (when configured). */
function startJudging(config: HistoryConfig, judgeStore: JudgeStore, logger: Logger) {
  const router = config.INFERENCE_ROUTER_ADDR
    ? createRpcClient(InferenceRouterService, {
        addr: config.INFERENCE_ROUTER_ADDR,
        caller: 'inference-history',
        logger,
        timeoutMs: 60_000,
      })
    : null;
  const judges = router ? { builtin: builtinJudgeOverRouter(router), llm: llmJudgeOverRouter(router) } : {};
  return startJudgeWorker(
    {
      store: judgeStore,
      judges,
      now: () => new Date(),
      logger,
      maxAttempts: config.JUDGE_MAX_ATTEMPTS,
      leaseMs: config.JUDGE_LEASE_SECONDS * 1000,
      batch: config.JUDGE_CONCURRENCY,
    },
    config.JUDGE_POLL_MS,
  );
}

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'inference-history' });
  const config = loadHistoryConfig();
  const logger = createLogger({ service: 'inference-history', level: config.LOG_LEVEL });
  const prisma = createPrismaClient(config.DATABASE_URL);
  const schema = new URL(config.DATABASE_URL).searchParams.get('schema') ?? 'history';
  // Events: our outbox → the transport (feedback.v1); inferences.v1 → one record per inference id.
  const events = startServiceEvents(config, { clientId: 'inference-history', defaultSchema: schema, logger });
  const signal = await pgIngestSignal(events.own.pool, inProcessIngestSignal(), logger);
  const judgeStore = prismaJudgeStore(prisma);
  const app = buildApp({
    store: prismaHistoryStore(prisma),
    judgeStore,
    conversations: prismaConversationStore(prisma),
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

  const judgeWorker = startJudging(config, judgeStore, logger);

  const ingest = async (batch: Parameters<typeof app.onInferenceEvents>[0]) => {
    const stored = await app.onInferenceEvents(batch);
    ingested.inc(stored);
    if (stored) judgeWorker.wake();
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
    host: config.HOST,
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    dependencies: events.dependencies,
    register: (router) => app.registerRoutes(router),
    onCall: metrics.onCall,
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  logger.info(
    { port: server.port, metricsPort: metricsServer.port, events: config.EVENTS_TRANSPORT },
    'inference-history listening',
  );

  drainOnSignals(
    logger,
    [
      () => server.close(),
      () => inferences.stop(),
      () => judgeWorker.stop(),
      () => signal.stop(),
      () => events.close(),
      () => metricsServer.close(),
      () => prisma.$disconnect(),
    ],
    telemetry,
  );
}

runMain('inference-history', main);
