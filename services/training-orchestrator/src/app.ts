import { AdaptiveService, TrainerService, TrainingService } from '@whetstone/proto/training/v1';
import type { ServiceRouter } from '@whetstone/rpc';
import type { EventEnvelope } from '@whetstone/events';
import { advanceAdaptations, onCandidateDeployment, onFeedbackVersionReady } from './application/adaptive';
import type { AdaptiveDeps } from './application/deps';
import { leaseKeeper } from './application/heartbeat';
import { markDeployed, markUndeployed } from './application/mark-deployed';
import { sweepLeases } from './application/sweep-leases';
import { datasetsConsumer } from './transport/events/datasets.consumer';
import { deploymentsConsumer } from './transport/events/deployments.consumer';
import { adaptiveHandler } from './transport/rpc/adaptive.handler';
import { trainerHandler } from './transport/rpc/trainer.handler';
import { trainingHandler } from './transport/rpc/training.handler';

export type AppDeps = AdaptiveDeps;

/** The wired service: its RPC routes, its event handlers and its background passes. No I/O happens here. */
export interface TrainingOrchestratorApp {
  registerRoutes(router: ServiceRouter): void;
  /**
   * deployments.v1: an activated deployment marks its job deployed, and ends a promotion; an ended one makes its job
   * complete again unless another project's active deployment still serves it.
   */
  onDeploymentEvent(event: EventEnvelope): Promise<void>;
  /** datasets.v1: a new feedback version may start an adaptation. */
  onDatasetEvent(event: EventEnvelope): Promise<void>;
  /** Takes back expired leases of jobs and evaluations; every replica may run it. */
  sweepLeases(): Promise<number>;
  /** Moves adaptations on (trained → evaluated → decided); every replica may run it. */
  advanceAdaptations(): Promise<number>;
}

export function buildApp(deps: AppDeps): TrainingOrchestratorApp {
  const leases = leaseKeeper(deps);
  return {
    registerRoutes(router) {
      router.service(TrainingService, trainingHandler(deps));
      router.service(TrainerService, trainerHandler(deps, leases));
      router.service(AdaptiveService, adaptiveHandler(deps));
    },
    onDeploymentEvent: deploymentsConsumer(
      async (outcome) => {
        if (outcome.activated) await markDeployed(deps, outcome.trainingJobId);
        await onCandidateDeployment(deps, outcome);
      },
      (end) => markUndeployed(deps, end),
    ),
    onDatasetEvent: datasetsConsumer((ready) => onFeedbackVersionReady(deps, ready)),
    sweepLeases: () => sweepLeases(deps),
    advanceAdaptations: () => advanceAdaptations(deps),
  };
}
