/** Composition root: config → adapters → use cases → gRPC server; drains on SIGTERM. */
import { blobStoreFromEnv } from '@whetstone/blobs';
import { ModelServerService } from '@whetstone/proto/inference/v1';
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
import { ModelServing } from './application/serving';
import { loadModelServerConfig } from './config';
import { modelServerHandler } from './transport/rpc/model-server.handler';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'model-server' });
  const config = loadModelServerConfig();
  const logger = createLogger({ service: 'model-server', level: config.LOG_LEVEL });
  const serving = new ModelServing({
    bundles: blobBundles(blobStoreFromEnv(config)),
    loader: mlLoader,
    logger,
    budgetBytes: config.MODEL_MEMORY_BUDGET_MB * 1024 * 1024,
  });
  const metrics = createServiceMetrics('model-server');
  const server = await createRpcServer({
    name: 'model-server',
    port: config.PORT,
    logger,
    metrics: metrics.registry,
    onCall: metrics.onCall,
    register: (router) => router.service(ModelServerService, modelServerHandler(serving)),
  });
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  logger.info(
    { port: server.port, metricsPort: metricsServer.port, budgetMb: config.MODEL_MEMORY_BUDGET_MB },
    'model-server listening',
  );
  // Listening first: a call that arrives while the built-in models warm waits for them instead of finding no
  // server (UNAVAILABLE, a 503 at the gateway). The first call pays for reading word vectors and gazetteers.
  for (const id of config.PRELOAD_MODELS.split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    serving.load({ modelId: id, bucket: '', key: '' });
    serving.extract(
      { modelId: id, bucket: '', key: '' },
      ['Warm up with Ada Lovelace in London.'],
      { entities: ['person'] },
      {},
    );
  }

  drainOnSignals(logger, [() => server.close(), () => metricsServer.close()], telemetry);
}

runMain('model-server', main);
