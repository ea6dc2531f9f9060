/** Composition root: config → orchestrator client and blob store → worker loop; stops on SIGTERM. */
import os from 'node:os';
import { blobStoreFromEnv } from '@whetstone/blobs';
import { TrainerService } from '@whetstone/proto/training/v1';
import { createRpcClient } from '@whetstone/rpc';
import { createLogger, createServiceMetrics, initTelemetry, runMain, startMetricsServer } from '@whetstone/telemetry';
import { Worker } from './transport/worker';
import { loadTrainerConfig } from './config';

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'trainer' });
  const config = loadTrainerConfig();
  const logger = createLogger({ service: 'trainer', level: config.LOG_LEVEL });
  const trainerId = config.TRAINER_ID ?? `${os.hostname()}-${process.pid}`;
  const orchestrator = createRpcClient(TrainerService, {
    addr: config.TRAINING_ORCHESTRATOR_ADDR,
    caller: 'trainer',
    logger,
    timeoutMs: 30_000,
  });
  const worker = new Worker({ orchestrator, blobs: blobStoreFromEnv(config), logger, trainerId });
  const metrics = createServiceMetrics('trainer');
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT);
  logger.info({ trainerId, metricsPort: metricsServer.port }, 'trainer waiting for jobs');
  const running = worker.run();

  const stop = async (signal: string) => {
    logger.info({ signal }, 'stopping');
    worker.stop();
    await Promise.race([running, new Promise((r) => setTimeout(r, 2_000))]);
    await metricsServer.close();
    await telemetry.shutdown().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

runMain('trainer', main);
