import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { encodeEvent, Topics } from '@whetstone/events';
import { JobDeletedSchema, JobStatusChangedSchema, TrainingUsageRecordedSchema } from '@whetstone/proto/training/v1';
import type { TrainingUsage } from '../application/ports';
import { jobStatusToPb } from '../contracts/enums';
import { ARTIFACTS_BUCKET, type Job } from '../domain/job';
import type { JobStatus } from '../domain/job-status';
import type { Prisma } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;
type OutboxRow = ReturnType<typeof encodeEvent>;

/** Writes an event into `outbox_events` through the caller's transaction (the events package's relay ships it). */
export async function appendOutbox(tx: Tx, row: OutboxRow): Promise<void> {
  const { topic, key, type, payload, headers } = row;
  await tx.outboxEvent.create({ data: { topic, key, type, payload: Buffer.from(payload), headers } });
}

/** JobStatusChanged on training.jobs.v1, keyed by job id: what the router's read model needs. */
export function statusChangedRow(
  job: Pick<Job, 'id' | 'teamId' | 'artifactKey' | 'rootBaseModel' | 'modelName'>,
  from: JobStatus | null,
  to: JobStatus,
  at: Date,
): OutboxRow {
  return encodeEvent(
    Topics.trainingJobs,
    JobStatusChangedSchema,
    create(JobStatusChangedSchema, {
      jobId: job.id,
      teamId: job.teamId,
      fromStatus: jobStatusToPb(from),
      toStatus: jobStatusToPb(to),
      artifactBucket: job.artifactKey ? ARTIFACTS_BUCKET : '',
      artifactKey: job.artifactKey ?? '',
      rootBaseModel: job.rootBaseModel,
      modelName: job.modelName,
      occurredAt: timestampFromDate(at),
    }),
    job.id,
  );
}

export function jobDeletedRow(jobId: string, teamId: string): OutboxRow {
  return encodeEvent(Topics.trainingJobs, JobDeletedSchema, create(JobDeletedSchema, { jobId, teamId }), jobId);
}

/** TrainingUsageRecorded on billing.usage.v1, keyed by team so one team's debits stay in order. */
export function trainingUsageRow(usage: TrainingUsage): OutboxRow {
  return encodeEvent(
    Topics.billingUsage,
    TrainingUsageRecordedSchema,
    create(TrainingUsageRecordedSchema, {
      usageId: usage.usageId,
      teamId: usage.teamId,
      keyId: usage.keyId,
      jobId: usage.jobId,
      baseModel: usage.baseModel,
      exampleEpochs: BigInt(usage.exampleEpochs),
      costMicroCredits: usage.costMicroCredits,
      occurredAt: timestampFromDate(usage.occurredAt),
    }),
    usage.teamId,
  );
}
