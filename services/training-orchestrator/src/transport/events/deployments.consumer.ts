import { decodeEvent, type EventEnvelope } from '@whetstone/events';
import { DeploymentActivatedSchema } from '@whetstone/proto/src/gen/whetstone/inference/v1/events_pb';
import type { Training } from '../../application/training';

export const DEPLOYMENTS_TOPIC = 'deployments.v1';
export const DEPLOYMENTS_CONSUMER = 'training-orchestrator.deployments';

/** deployments.v1 → a job whose deployment went active is `deployed` (idempotent). */
export function deploymentsConsumer(training: Training) {
  return async (event: EventEnvelope): Promise<void> => {
    const activated = decodeEvent(event, DeploymentActivatedSchema);
    if (activated) await training.markDeployed(activated.trainingJobId);
  };
}
