import { timestampDate } from '@bufbuild/protobuf/wkt';
import { JobStatus, type JobStatusChanged } from '@whetstone/proto/training/v1';
import type { TrainedModel } from '../../domain/trained-model';

/** Statuses whose bundle may serve and be deployed. The orchestrator owns the state machine; this is all the router reads of it. */
const SERVABLE = new Set([JobStatus.COMPLETE, JobStatus.DEPLOYED]);

/** The label users know a status by, for messages ("Training job … is running"). */
const LABEL: Record<JobStatus, string> = {
  [JobStatus.UNSPECIFIED]: 'unknown',
  [JobStatus.REQUESTED]: 'requested',
  [JobStatus.RUNNING]: 'running',
  [JobStatus.COMPLETE]: 'complete',
  [JobStatus.FAILED]: 'failed',
  [JobStatus.DEPLOYED]: 'deployed',
  [JobStatus.CANCELLED]: 'cancelled',
};

/** JobStatusChanged → the router's read-model row. */
export function trainedModelOf(event: JobStatusChanged, receivedAt: Date): TrainedModel {
  const servable = SERVABLE.has(event.toStatus) && !!event.artifactKey;
  const occurredAt = event.occurredAt ? timestampDate(event.occurredAt) : receivedAt;
  return {
    jobId: event.jobId,
    teamId: event.teamId,
    servable,
    statusLabel: LABEL[event.toStatus] ?? 'unknown',
    baseModel: event.rootBaseModel,
    modelName: event.modelName,
    bundle: servable ? { bucket: event.artifactBucket, key: event.artifactKey } : null,
    completedAt: servable ? occurredAt : null,
    updatedAt: occurredAt,
  };
}
