/** Training-job domain: the job and its parts, bounds, pricing and lease constants. */
import { BUILTIN_MODELS, TRAINING_PRICE_PER_EXAMPLE_EPOCH, type CatalogEntry } from '@whetstone/catalog';
import type { JobStatus } from './job-status';

export type TrainingType = 'lora' | 'full';
export type CheckpointType = 'training' | 'sampler';

/** A dataset a job trains on, resolved to a ready version and its split locations at creation. */
export interface DatasetSplit {
  name: string;
  version_number: number;
  size: number;
  bucket: string;
  train_key: string;
  heldout_key: string;
  /** Times each row is seen per epoch; absent (1) for datasets a user names. */
  weight?: number;
  /** Feedback datasets, as resolved (not stored with a job): corrections among the version's verdicts. */
  corrections?: number;
}

/** The OpenAI fine-tuning request a job came from, kept so it reads back in that API's shape. */
export interface FineTuningSource {
  training_file: string;
  /** Empty when none was given. */
  validation_file: string;
  suffix: string;
  metadata: Record<string, string>;
}

export interface Job {
  id: string;
  teamId: string;
  userId: string;
  keyId: string;
  /** What the team asked for: a built-in model id, or the job or checkpoint it continues from. */
  baseModel: string;
  rootBaseModel: string;
  modelName: string;
  trainingType: TrainingType;
  nrEpochs: number;
  learningRate: number;
  seed: number;
  projectId: string | null;
  /** The out-of-scope label named at creation: classification tasks reject below a held-out threshold. */
  outOfScopeLabel: string | null;
  /** What a job created through the OpenAI-compatible fine-tuning API was created from; null for the others. */
  fineTuning: FineTuningSource | null;
  datasets: DatasetSplit[];
  status: JobStatus;
  metrics: Record<string, unknown> | null;
  progress: Record<string, unknown> | null;
  failureReason: string | null;
  attempts: number;
  resumeKey: string | null;
  artifactKey: string | null;
  artifactSize: number | null;
  /** The bundle's manifest as JSON, written by the trainer next to the bundle. */
  manifestKey: string | null;
  costMicroCredits: bigint;
  leaseToken: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface Checkpoint {
  id: string;
  jobId: string;
  /** weights/<step> or sampler_weights/<step>. */
  checkpointId: string;
  type: CheckpointType;
  step: number;
  key: string;
  sizeBytes: number;
  createdAt: Date;
}

/** Where training stood when a progress line was written. */
export interface StepMetrics {
  step: number;
  totalSteps: number;
  epoch: number;
  trainLoss: number;
  /** Decoders: the share of the step's scored tokens ranked first. */
  trainMeanTokenAccuracy?: number;
  /** Decoders, on the line of a step that ends an epoch: the held-out rows' loss and token accuracy. */
  validLoss?: number;
  validMeanTokenAccuracy?: number;
}

export interface LogEntry {
  id: string;
  jobId: string;
  timestamp: Date;
  level: string;
  message: string;
  source: string;
  /** A progress line's figures. */
  metrics?: StepMetrics;
}

export type LogLevel = 'info' | 'warn' | 'error';
export interface LogLine {
  level: LogLevel;
  message: string;
  metrics?: StepMetrics;
}

export const ARTIFACTS_BUCKET = 'artifacts';
/** A lease not renewed for this long is taken back and the work retried. */
export const LEASE_MS = 30_000;
/** Attempts before a job (or evaluation) whose trainers keep failing is failed. */
export const MAX_ATTEMPTS = 3;
/** Longest log line kept. */
export const MAX_LOG_LINE = 4_000;

export function trainableBase(id: string): CatalogEntry | undefined {
  return BUILTIN_MODELS.find((m) => m.id === id && m.supportsTraining);
}

/** Decoders report held-out loss in their metrics; evaluations score extraction models only. */
export function isDecoderBase(id: string): boolean {
  return BUILTIN_MODELS.some((m) => m.id === id && m.task === 'decoder');
}

export function trainingCost(exampleEpochs: number): bigint {
  return BigInt(Math.max(0, Math.round(exampleEpochs))) * TRAINING_PRICE_PER_EXAMPLE_EPOCH;
}

/** Every key a job writes starts with this. */
export function artifactPrefix(jobId: string): string {
  return `jobs/${jobId}/`;
}

export function defaultModelName(baseModel: string, now: Date): string {
  return `${baseModel.replace(/^whetstone-/, '')}-${now.toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
}

/** A level a trainer sent, reduced to the three we store. */
export function logLevelOf(level: string): LogLevel {
  return level === 'warn' || level === 'error' ? level : 'info';
}

/** Whether a job's final model exists (complete, or complete and then deployed). */
export function hasModel(job: Pick<Job, 'status' | 'artifactKey'>): job is Job & { artifactKey: string } {
  return (job.status === 'complete' || job.status === 'deployed') && Boolean(job.artifactKey);
}

/** The newest checkpoint a job can resume from (checkpoints come highest step first). */
export function lastTrainingCheckpoint(checkpoints: Checkpoint[]): Checkpoint | undefined {
  return checkpoints.find((c) => c.type === 'training');
}
