import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { JobStatusChanged } from '@whetstone/proto/training/v1';
import { jobStatusView } from '../../adapters/proto-kinds';
import type { TrainedModel } from '../../domain/trained-model';

/** JobStatusChanged → the router's read-model row. */
export function trainedModelOf(event: JobStatusChanged, receivedAt: Date): TrainedModel {
  const { servable, statusLabel } = jobStatusView(event.toStatus, event.artifactKey);
  const occurredAt = event.occurredAt ? timestampDate(event.occurredAt) : receivedAt;
  return {
    jobId: event.jobId,
    teamId: event.teamId,
    servable,
    statusLabel,
    baseModel: event.rootBaseModel,
    modelName: event.modelName,
    bundle: servable ? { bucket: event.artifactBucket, key: event.artifactKey } : null,
    completedAt: servable ? occurredAt : null,
    updatedAt: occurredAt,
  };
}
