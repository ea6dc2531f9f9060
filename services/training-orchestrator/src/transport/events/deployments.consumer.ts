import { decodeEvent, type EventEnvelope, Topics } from '@whetstone/events';
import { isUuid } from '@whetstone/errors';
import { DeploymentActivatedSchema } from '@whetstone/proto/inference/v1';

export const DEPLOYMENTS_TOPIC = Topics.deployments;
export const DEPLOYMENTS_CONSUMER = 'training-orchestrator.deployments';

/** deployments.v1 → a job whose deployment went active is `deployed` (idempotent). */
export function deploymentsConsumer(onActivated: (jobId: string) => Promise<void>) {
  return async (event: EventEnvelope): Promise<void> => {
    const activated = decodeEvent(event, DeploymentActivatedSchema);
    if (activated && isUuid(activated.trainingJobId)) await onActivated(activated.trainingJobId);
  };
}
