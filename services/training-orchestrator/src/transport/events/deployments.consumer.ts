import { decodeEvent, type EventEnvelope, Topics } from '@whetstone/events';
import { DeploymentActivatedSchema } from '@whetstone/proto/inference/v1';
import type { Training } from '../../application/training';

export const DEPLOYMENTS_TOPIC = Topics.deployments;
export const DEPLOYMENTS_CONSUMER = 'training-orchestrator.deployments';

/** deployments.v1 → a job whose deployment went active is `deployed` (idempotent). */
export function deploymentsConsumer(training: Training) {
  return async (event: EventEnvelope): Promise<void> => {
    const activated = decodeEvent(event, DeploymentActivatedSchema);
    if (activated) await training.markDeployed(activated.trainingJobId);
  };
}
