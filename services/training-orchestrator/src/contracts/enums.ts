/**
 * Domain values ⇄ the training proto's enums, declared once for the RPC
 * mappers and the outbox events. Nothing else converts them.
 */
import {
  CheckpointType as PbCheckpointType,
  EvaluationStatus as PbEvaluationStatus,
  JobStatus as PbJobStatus,
  TrainingType as PbTrainingType,
} from '@whetstone/proto/training/v1';
import type { EvaluationStatus } from '../domain/evaluation';
import type { CheckpointType, TrainingType } from '../domain/job';
import type { JobStatus } from '../domain/job-status';

const JOB_STATUS: Record<JobStatus, PbJobStatus> = {
  requested: PbJobStatus.REQUESTED,
  running: PbJobStatus.RUNNING,
  complete: PbJobStatus.COMPLETE,
  failed: PbJobStatus.FAILED,
  deployed: PbJobStatus.DEPLOYED,
  cancelled: PbJobStatus.CANCELLED,
};

const TRAINING_TYPE: Record<TrainingType, PbTrainingType> = {
  lora: PbTrainingType.LORA,
  full: PbTrainingType.FULL,
};

const CHECKPOINT_TYPE: Record<CheckpointType, PbCheckpointType> = {
  training: PbCheckpointType.TRAINING,
  sampler: PbCheckpointType.SAMPLER,
};

const EVALUATION_STATUS: Record<EvaluationStatus, PbEvaluationStatus> = {
  running: PbEvaluationStatus.RUNNING,
  complete: PbEvaluationStatus.COMPLETE,
  failed: PbEvaluationStatus.FAILED,
};

function inverse<K extends string, V extends number>(table: Record<K, V>): Map<V, K> {
  return new Map(Object.entries(table).map(([k, v]) => [v as V, k as K]));
}
const JOB_STATUS_OF = inverse(JOB_STATUS);
const TRAINING_TYPE_OF = inverse(TRAINING_TYPE);
const CHECKPOINT_TYPE_OF = inverse(CHECKPOINT_TYPE);

/** A status absent (e.g. before creation) is JOB_STATUS_UNSPECIFIED. */
export const jobStatusToPb = (s: JobStatus | null): PbJobStatus => (s ? JOB_STATUS[s] : PbJobStatus.UNSPECIFIED);
/** UNSPECIFIED (and any value this build does not know) is undefined. */
export const jobStatusFromPb = (s: PbJobStatus): JobStatus | undefined => JOB_STATUS_OF.get(s);
export const trainingTypeToPb = (t: TrainingType): PbTrainingType => TRAINING_TYPE[t];
export const trainingTypeFromPb = (t: PbTrainingType): TrainingType | undefined => TRAINING_TYPE_OF.get(t);
export const checkpointTypeToPb = (t: CheckpointType): PbCheckpointType => CHECKPOINT_TYPE[t];
export const checkpointTypeFromPb = (t: PbCheckpointType): CheckpointType | undefined => CHECKPOINT_TYPE_OF.get(t);
export const evaluationStatusToPb = (s: EvaluationStatus): PbEvaluationStatus => EVALUATION_STATUS[s];
