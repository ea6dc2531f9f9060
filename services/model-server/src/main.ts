/** Composition root: config → adapters → buildApp → gRPC server; drains on SIGTERM. */
import '@whetstone/telemetry/instrument';
import { blobStoreFromEnv } from '@whetstone/blobs';
import { PrefixCache } from '@whetstone/ml';
import { createRpcServer } from '@whetstone/rpc';
import {
  createLogger,
  createServiceMetrics,
  drainOnSignals,
  initTelemetry,
  runMain,
  startMetricsServer,
} from '@whetstone/telemetry';
import { blobBundles } from './adapters/blob-bundles';
import { mlLoader } from './adapters/ml-loader';
import { registerPrefixCacheMetrics } from './adapters/prefix-cache-metrics';
import { buildApp } from './app';
import { loadModelServerConfig } from './config';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'model-server' });
  const config = loadModelServerConfig();
  const logger = createLogger({ service: 'model-server', level: config.LOG_LEVEL });
  const prefixCache =
    config.PREFIX_CACHE_MB > 0
      ? new PrefixCache({
          maxBytes: config.PREFIX_CACHE_MB * 1024 * 1024,
          defaultTtlSeconds: config.PREFIX_CACHE_TTL_SECONDS,
          minPrefixTokens: config.PREFIX_CACHE_MIN_TOKENS,
        })
      : undefined;
  const app = buildApp({
    bundles: blobBundles(blobStoreFromEnv(config)),
    loader: mlLoader,
    logger,
    budgetBytes: config.MODEL_MEMORY_BUDGET_MB * 1024 * 1024,
    batching: { windowMs: config.BATCH_WINDOW_MS, maxTexts: config.BATCH_MAX_TEXTS },
    prefixCache,
  });
  const metrics = createServiceMetrics('model-server');
  if (prefixCache) registerPrefixCacheMetrics(metrics.registry, prefixCache);
  const server = await createRpcServer({
    name: 'model-server',
    host: config.HOST,
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    onCall: metrics.onCall,
    // Readiness waits for the built-in models (below); liveness does not.
    servingAtStart: false,
    register: (router) => app.registerRoutes(router),
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  logger.info(
    { port: server.port, metricsPort: metricsServer.port, budgetMb: config.MODEL_MEMORY_BUDGET_MB },
    'model-server listening',
  );
  // Listening first: a call that arrives while the built-in models warm waits for them instead of finding no
  // server (UNAVAILABLE, a 503 at the gateway). Readiness (grpc.health.v1 for '') says NOT_SERVING until they are
  // warm, so on Kubernetes the pod joins its headless Service, and the router's model placement, only then; the
  // warm-up reads word vectors and gazetteers and blocks the event loop for a few seconds.
  const warmStart = Date.now();
  app.preload(config.preloadModels);
  server.setServing(true);
  logger.info({ models: config.preloadModels, ms: Date.now() - warmStart }, 'built-in models warm; serving');

  drainOnSignals(logger, [() => server.close(), () => metricsServer.close()], telemetry);
}

runMain('model-server', main);
