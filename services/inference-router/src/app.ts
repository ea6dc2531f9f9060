import { startPollingWorker, type PollingWorker } from '@whetstone/events';
import { ChatBatchService, InferenceRouterService } from '@whetstone/proto/inference/v1';
import type { ServiceRouter } from '@whetstone/rpc';
import { batchSlots } from './application/batches';
import { releaseJob, resumePendingDeployments } from './application/deployments';
import type { RouterDeps } from './application/deps';
import { recordJobChanged, recordJobDeleted } from './application/record-job';
import { DeploymentWarmer } from './application/warm-deployment';
import type { TrainedModel } from './domain/trained-model';
import { batchAnswers, batchesHandler } from './transport/rpc/batches.handler';
import { routerHandler } from './transport/rpc/router.handler';

export type { RouterDeps };

/** The wired service: its RPC routes and its event handlers. No I/O happens here. */
export interface RouterApp {
  registerRoutes(router: ServiceRouter): void;
  /** JobStatusChanged, mapped: keep the read model's copy of the job. */
  onJobChanged(model: TrainedModel): Promise<boolean>;
  /** JobDeleted: forget the job and release its deployments. */
  onJobDeleted(jobId: string, teamId: string): Promise<number>;
  /** Finishes deployments left `deploying` by a restart; returns how many. */
  resumePendingDeployments(): Promise<number>;
  /** Releases a job's deployments (what JobDeleted does, without touching the read model). */
  releaseJob(trainingJobId: string): Promise<number>;
  /** Deployments still warming. */
  readonly deploymentsInFlight: number;
  /** The message-batch worker: claims due batch requests and runs each as a Chat call. */
  startBatchWorker(options: BatchWorkerOptions): PollingWorker;
}

export interface BatchWorkerOptions {
  concurrency: number;
  idleMs: number;
  leaseMs: number;
  /** How long one batched call may run. */
  callTimeoutMs: number;
  maxAttempts: number;
  /** What a batched request costs, as a percent of the same call made directly. */
  pricePercent: number;
}

export function buildApp(deps: RouterDeps): RouterApp {
  const warmer = new DeploymentWarmer(deps);
  return {
    registerRoutes: (router) => {
      router.service(InferenceRouterService, routerHandler(deps, warmer));
      router.service(ChatBatchService, batchesHandler(deps));
    },
    onJobChanged: (model) => recordJobChanged(deps, model),
    onJobDeleted: (jobId, teamId) => recordJobDeleted(deps, jobId, teamId),
    resumePendingDeployments: () => resumePendingDeployments(deps, warmer),
    releaseJob: (jobId) => releaseJob(deps, jobId),
    startBatchWorker: ({ concurrency, idleMs, leaseMs, callTimeoutMs, maxAttempts, pricePercent }) => {
      const worker = {
        batches: deps.batches,
        answers: batchAnswers(deps, callTimeoutMs, pricePercent),
        now: deps.now,
        logger: deps.logger,
        concurrency,
        leaseMs,
        maxAttempts,
      };
      const slots = batchSlots(worker, idleMs);
      const loop = startPollingWorker({ name: 'batch', pass: slots.pass, idleMs, logger: deps.logger });
      return {
        wake: loop.wake,
        stop: () => loop.stop().then(slots.drain),
      };
    },
    get deploymentsInFlight() {
      return warmer.inFlight;
    },
  };
}
