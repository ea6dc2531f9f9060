import { TrainerService, TrainingService } from '@whetstone/proto/training/v1';
import type { ServiceRouter } from '@whetstone/rpc';
import type { EventEnvelope } from '@whetstone/events';
import type { UseCaseDeps } from './application/deps';
import { leaseKeeper } from './application/heartbeat';
import { markDeployed } from './application/mark-deployed';
import { sweepLeases } from './application/sweep-leases';
import { deploymentsConsumer } from './transport/events/deployments.consumer';
import { trainerHandler } from './transport/rpc/trainer.handler';
import { trainingHandler } from './transport/rpc/training.handler';

export type AppDeps = UseCaseDeps;

/** The wired service: its RPC routes, its event handler and its lease sweeper. No I/O happens here. */
export interface TrainingOrchestratorApp {
  registerRoutes(router: ServiceRouter): void;
  /** deployments.v1 events: an activated deployment marks its job deployed. */
  onDeploymentEvent(event: EventEnvelope): Promise<void>;
  /** Takes back expired leases of jobs and evaluations; every replica may run it. */
  sweepLeases(): Promise<number>;
}

export function buildApp(deps: AppDeps): TrainingOrchestratorApp {
  const leases = leaseKeeper(deps);
  return {
    registerRoutes(router) {
      router.service(TrainingService, trainingHandler(deps));
      router.service(TrainerService, trainerHandler(deps, leases));
    },
    onDeploymentEvent: deploymentsConsumer((jobId) => markDeployed(deps, jobId)),
    sweepLeases: () => sweepLeases(deps),
  };
}
