/** Domain ⇄ proto for TrainingService; no rules here. */
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type {
  CheckpointSchema,
  EvaluationSchema,
  FineTuningSource,
  JobSchema,
  LogEntrySchema,
} from '@whetstone/proto/training/v1';
import { checkpointTypeToPb, evaluationStatusToPb, jobStatusToPb, trainingTypeToPb } from '../../contracts/enums';
import type { Evaluation } from '../../domain/evaluation';
import {
  ARTIFACTS_BUCKET,
  type Checkpoint,
  type FineTuningSource as DomainFineTuningSource,
  type Job,
  type LogEntry,
} from '../../domain/job';

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);
const struct = (v: Record<string, unknown> | null) => (v ? (v as JsonObject) : undefined);

export function jobToPb(j: Job): MessageInitShape<typeof JobSchema> {
  return {
    id: j.id,
    status: jobStatusToPb(j.status),
    baseModel: j.baseModel,
    rootBaseModel: j.rootBaseModel,
    datasets: j.datasets.map((d) => ({
      name: d.name,
      versionNumber: d.version_number,
      size: d.size,
      weight: d.weight ?? 1,
    })),
    modelName: j.modelName,
    trainingType: trainingTypeToPb(j.trainingType),
    nrEpochs: j.nrEpochs,
    learningRate: j.learningRate,
    projectId: j.projectId ?? '',
    metrics: struct(j.metrics),
    progress: struct(j.progress),
    failureReason: j.failureReason ?? '',
    attempts: j.attempts,
    artifactBucket: j.artifactKey ? ARTIFACTS_BUCKET : '',
    artifactKey: j.artifactKey ?? '',
    artifactSize: BigInt(j.artifactSize ?? 0),
    createdAt: ts(j.createdAt),
    startedAt: ts(j.startedAt),
    finishedAt: ts(j.finishedAt),
    costMicroCredits: j.costMicroCredits,
    outOfScopeLabel: j.outOfScopeLabel ?? '',
    fineTuning: j.fineTuning
      ? {
          trainingFile: j.fineTuning.training_file,
          validationFile: j.fineTuning.validation_file,
          suffix: j.fineTuning.suffix,
          metadata: j.fineTuning.metadata,
        }
      : undefined,
    seed: BigInt(j.seed),
  };
}

export const fineTuningFromPb = (f: FineTuningSource): DomainFineTuningSource => ({
  training_file: f.trainingFile,
  validation_file: f.validationFile,
  suffix: f.suffix,
  metadata: { ...f.metadata },
});

export const logToPb = (l: LogEntry): MessageInitShape<typeof LogEntrySchema> => ({
  id: l.id,
  jobId: l.jobId,
  timestamp: ts(l.timestamp),
  level: l.level,
  message: l.message,
  source: l.source,
  ...(l.metrics
    ? { metrics: { ...l.metrics, step: BigInt(l.metrics.step), totalSteps: BigInt(l.metrics.totalSteps) } }
    : {}),
});

export const checkpointToPb = (c: Checkpoint): MessageInitShape<typeof CheckpointSchema> => ({
  uuid: c.id,
  checkpointId: c.checkpointId,
  checkpointType: checkpointTypeToPb(c.type),
  time: ts(c.createdAt),
  sizeBytes: BigInt(c.sizeBytes),
  step: BigInt(c.step),
});

export const evaluationToPb = (e: Evaluation): MessageInitShape<typeof EvaluationSchema> => ({
  id: e.id,
  jobId: e.jobId,
  datasetName: e.datasetName,
  status: evaluationStatusToPb(e.status),
  metrics: struct(e.metrics),
  error: e.error ?? '',
  createdAt: ts(e.createdAt),
});
