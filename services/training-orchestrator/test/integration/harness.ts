import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@connectrpc/connect';
import { FsBlobStore } from '@whetstone/blobs';
import { TrainerService, TrainingService } from '@whetstone/proto/training/v1';
import { closeRpcChannels, createRpcClient, createRpcServer } from '@whetstone/rpc';
import { createLogger } from '@whetstone/telemetry';
import { inProcessWorkSignal } from '../../src/adapters/in-process-work-signal';
import { PrismaCheckpointRepository } from '../../src/adapters/prisma-checkpoints.repository';
import { PrismaEvaluationRepository } from '../../src/adapters/prisma-evaluations.repository';
import { PrismaJobLogRepository } from '../../src/adapters/prisma-job-logs.repository';
import { PrismaJobRepository } from '../../src/adapters/prisma-jobs.repository';
import { systemClock } from '../../src/adapters/system-clock';
import { errors } from '@whetstone/errors';
import {
  PrismaAdaptationRepository,
  PrismaAdaptiveSettingsRepository,
} from '../../src/adapters/prisma-adaptive.repository';
import type { AdaptiveDeps } from '../../src/application/deps';
import type { ProjectsPort } from '../../src/application/ports';
import { buildApp, type TrainingOrchestratorApp } from '../../src/app';
import { WIKIGOLD, fakeDatasets } from '../fakes/in-memory';
import { createOrchestratorDatabase } from '../factories/database';

export interface Harness {
  db: Awaited<ReturnType<typeof createOrchestratorDatabase>>;
  deps: AdaptiveDeps;
  app: TrainingOrchestratorApp;
  training: Client<typeof TrainingService>;
  trainer: Client<typeof TrainerService>;
  close(): Promise<void>;
}

/**
 * The real orchestrator in-process on port 0 over a fresh Postgres schema and
 * a temporary blob directory; datasets and billing (other services) are fakes.
 */
/** The router's projects, for tests that do not adapt: every project is unknown. */
const noProjects: ProjectsPort = {
  activeJob: async (_actor, projectId) => {
    throw errors.notFound('PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
  },
  deploy: async () => undefined,
  servesAnywhere: async () => false,
};

export async function startHarness(options: { leaseMs?: number; projects?: ProjectsPort } = {}): Promise<Harness> {
  const db = await createOrchestratorDatabase('orch_it');
  const blobDir = mkdtempSync(path.join(os.tmpdir(), 'orch-it-'));
  const logger = createLogger({ service: 'training-orchestrator-test', level: 'silent' });
  const deps: AdaptiveDeps = {
    jobs: new PrismaJobRepository(db.prisma),
    logs: new PrismaJobLogRepository(db.prisma),
    checkpoints: new PrismaCheckpointRepository(db.prisma),
    evaluations: new PrismaEvaluationRepository(db.prisma),
    datasets: fakeDatasets([WIKIGOLD]),
    billing: { checkSpendable: async () => undefined },
    blobs: new FsBlobStore({ root: blobDir, publicBaseUrl: 'http://127.0.0.1:1/blobs', signingSecret: 'k'.repeat(32) }),
    clock: systemClock,
    work: inProcessWorkSignal(),
    logger,
    leaseMs: options.leaseMs ?? 30_000,
    adaptiveSettings: new PrismaAdaptiveSettingsRepository(db.prisma),
    adaptations: new PrismaAdaptationRepository(db.prisma),
    projects: options.projects ?? noProjects,
    feedbackVersions: { versionNow: async () => null },
  };
  const app = buildApp(deps);
  const server = await createRpcServer({
    name: 'training-orchestrator',
    port: 0,
    host: '127.0.0.1',
    logger,
    register: (r) => app.registerRoutes(r),
  });
  const addr = `127.0.0.1:${server.port}`;
  return {
    db,
    deps,
    app,
    training: createRpcClient(TrainingService, { addr, caller: 'orchestrator-test' }),
    trainer: createRpcClient(TrainerService, { addr, caller: 'orchestrator-test' }),
    async close() {
      closeRpcChannels();
      await server.close();
      await db.close();
      rmSync(blobDir, { recursive: true, force: true });
    },
  };
}
