/** Composition root: config → orchestrator client, object storage and the ML engine → work loop; stops on SIGTERM. */
import '@whetstone/telemetry/instrument';
import os from 'node:os';
import { blobStoreFromEnv } from '@whetstone/blobs';
import { TrainerService } from '@whetstone/proto/training/v1';
import { createRpcClient } from '@whetstone/rpc';
import {
  createLogger,
  createServiceMetrics,
  drainOnSignals,
  initTelemetry,
  runMain,
  startMetricsServer,
} from '@whetstone/telemetry';
import { blobArtifacts } from './adapters/blob-artifacts';
import { failpointFile } from './adapters/failpoint-file';
import { orchestratorOverRpc } from './adapters/orchestrator.client';
import { ThreadedEngine } from './adapters/threaded-engine';
import { buildApp } from './app';
import { loadTrainerConfig } from './config';

/** How long SIGTERM waits for the current work to abort before exiting. */
const STOP_GRACE_MS = 2_000;

async function main(): Promise<void> {
  const telemetry = initTelemetry({ service: 'trainer' });
  const config = loadTrainerConfig();
  const logger = createLogger({ service: 'trainer', level: config.LOG_LEVEL });
  const trainerId = config.TRAINER_ID ?? `${os.hostname()}-${process.pid}`;
  const client = createRpcClient(TrainerService, {
    addr: config.TRAINING_ORCHESTRATOR_ADDR,
    caller: 'trainer',
    logger,
    timeoutMs: 30_000,
  });
  const engine = new ThreadedEngine(logger);
  const app = buildApp({
    orchestrator: orchestratorOverRpc(client),
    artifacts: blobArtifacts(blobStoreFromEnv(config)),
    engine,
    logger,
    trainerId,
    ...(config.TRAINER_FAILPOINT_FILE ? { failpoints: failpointFile(config.TRAINER_FAILPOINT_FILE, logger) } : {}),
  });
  const metrics = createServiceMetrics('trainer');
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.HOST);
  logger.info({ trainerId, metricsPort: metricsServer.port }, 'trainer waiting for work');
  const running = app.run();

  // The same shutdown as every deployable: one 'draining' line (a Ctrl-C under `pnpm start` sends SIGINT,
  // then the supervisor SIGTERM), then 'stopped' once the work loop, the engine and the metrics port are done.
  drainOnSignals(
    logger,
    [
      async () => {
        app.stop();
        await Promise.race([running, new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
      },
      () => engine.close(),
      () => metricsServer.close(),
    ],
    telemetry,
  );
}

runMain('trainer', main);
