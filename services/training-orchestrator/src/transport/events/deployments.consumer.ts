import { decodeEvent, type EventEnvelope, Topics } from '@whetstone/events';
import { isUuid } from '@whetstone/errors';
import {
  DeploymentActivatedSchema,
  DeploymentEndedSchema,
  DeploymentFailedSchema,
} from '@whetstone/proto/inference/v1';

export const DEPLOYMENTS_TOPIC = Topics.deployments;
export const DEPLOYMENTS_CONSUMER = 'training-orchestrator.deployments';

/** A deployment of a job went active, or could not. */
export interface DeploymentOutcome {
  trainingJobId: string;
  projectId: string;
  activated: boolean;
  reason: string;
}

/** An active deployment of a job stopped serving its project (replaced, or the project deleted). */
export interface DeploymentEnd {
  trainingJobId: string;
  teamId: string;
  projectId: string;
  reason: string;
}

/**
 * deployments.v1 → each outcome, and each end of a deployment, once decoded (other events and malformed ids are
 * skipped). Handlers are idempotent.
 */
export function deploymentsConsumer(
  onOutcome: (outcome: DeploymentOutcome) => Promise<void>,
  onEnd: (end: DeploymentEnd) => Promise<void> = async () => undefined,
) {
  return async (event: EventEnvelope): Promise<void> => {
    const ended = decodeEvent(event, DeploymentEndedSchema);
    if (ended && isUuid(ended.trainingJobId))
      return onEnd({
        trainingJobId: ended.trainingJobId,
        teamId: ended.teamId,
        projectId: ended.projectId,
        reason: ended.reason,
      });
    const activated = decodeEvent(event, DeploymentActivatedSchema);
    if (activated && isUuid(activated.trainingJobId))
      return onOutcome({
        trainingJobId: activated.trainingJobId,
        projectId: activated.projectId,
        activated: true,
        reason: '',
      });
    const failed = decodeEvent(event, DeploymentFailedSchema);
    if (failed && isUuid(failed.trainingJobId))
      return onOutcome({
        trainingJobId: failed.trainingJobId,
        projectId: failed.projectId,
        activated: false,
        reason: failed.reason,
      });
  };
}
