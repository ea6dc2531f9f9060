/** What the trainer's use cases need; adapters implement these over gRPC, object storage and packages/ml. */
import type { Failure } from '@whetstone/errors';
import type { Logger } from '@whetstone/telemetry';
import type { Progress, StepFigures } from '../domain/progress';

export type { Logger };

/** One dataset row as stored (JSONL); the engine knows its shape. */
export type Row = Record<string, unknown>;
export type LogLevel = 'info' | 'warn' | 'error';

/** A line of the job's log; a progress line carries the figures it states. */
export interface LogLine {
  level: LogLevel;
  message: string;
  metrics?: StepFigures;
}

export interface TrainingWork {
  kind: 'job';
  jobId: string;
  leaseToken: string;
  leaseMs: number;
  baseModel: string;
  trainingType: 'lora' | 'full';
  nrEpochs: number;
  learningRate: number;
  seed: number;
  datasetBucket: string;
  trainKeys: string[];
  /** Times each row of trainKeys[i] is seen per epoch (adaptive retraining weights feedback up); missing or 0 means 1. */
  trainRepeats?: number[];
  heldoutKeys: string[];
  artifactBucket: string;
  artifactPrefix: string;
  /** Empty to start fresh. */
  resumeKey: string;
  attempt: number;
  /** The out-of-scope label the job named (classification rejection); empty or absent for none. */
  outOfScopeLabel?: string;
}

export interface EvaluationWork {
  kind: 'evaluation';
  evaluationId: string;
  leaseToken: string;
  leaseMs: number;
  baseModel: string;
  artifactBucket: string;
  artifactKey: string;
  datasetBucket: string;
  heldoutKey: string;
  attempt: number;
}

export type Work = TrainingWork | EvaluationWork;
export interface JobLease {
  jobId: string;
  leaseToken: string;
}
export interface EvaluationLease {
  evaluationId: string;
  leaseToken: string;
}

/** The orchestrator's TrainerService. Calls returning a boolean say whether to go on (false: stop now). */
export interface Orchestrator {
  leaseWork(trainerId: string, waitMs: number): Promise<Work | null>;
  heartbeat(lease: JobLease): Promise<boolean>;
  reportProgress(lease: JobLease, progress: Progress): Promise<boolean>;
  appendLogs(lease: JobLease, source: string, lines: LogLine[]): Promise<boolean>;
  putCheckpoint(
    lease: JobLease,
    c: { checkpointId: string; type: 'training' | 'sampler'; step: number; key: string; sizeBytes: number },
  ): Promise<boolean>;
  completeJob(
    lease: JobLease,
    result: {
      artifactKey: string;
      artifactSize: number;
      manifestKey: string;
      metrics: Record<string, unknown>;
      exampleEpochs: number;
    },
  ): Promise<void>;
  failJob(lease: JobLease, failure: Failure): Promise<void>;
  heartbeatEvaluation(lease: EvaluationLease): Promise<boolean>;
  completeEvaluation(lease: EvaluationLease, metrics: Record<string, unknown>): Promise<void>;
  failEvaluation(lease: EvaluationLease, failure: Failure): Promise<void>;
}

/** Object storage as the trainer uses it. */
export interface Artifacts {
  /** A JSONL object's rows; a SyntaxError when a line is not JSON. */
  readRows(bucket: string, key: string): Promise<Row[]>;
  readBytes(bucket: string, key: string): Promise<Uint8Array>;
  /** Stores the object; returns its size in bytes. */
  put(bucket: string, key: string, bytes: Uint8Array): Promise<number>;
}

export interface TrainHooks {
  resumeFrom?: Uint8Array;
  signal: AbortSignal;
  onLog(level: LogLevel, message: string): void;
  onProgress(p: Progress): void;
  onCheckpoint(c: { id: string; type: 'training' | 'sampler'; step: number; bytes: Uint8Array }): Promise<void>;
}

/** The ML engine (packages/ml): training and scoring. Data errors it knows of are thrown as AppErrors. */
export interface TrainingEngine {
  train(
    input: {
      baseModel: string;
      trainingType: 'lora' | 'full';
      train: Row[];
      heldout: Row[];
      hyperparameters: { nrEpochs: number; learningRate: number; seed: number };
      /** Single-label classification tasks answer this label below a threshold chosen on the held-out rows. */
      outOfScope?: { label: string };
    },
    hooks: TrainHooks,
  ): Promise<{ bundle: Uint8Array; manifest: unknown; metrics: Record<string, unknown> }>;
  /** Scores a bundle on held-out rows: f1, precision, recall, per_label. */
  /** Extraction: f1, precision, recall, per_label; decoders: loss, perplexity, base_loss, base_perplexity. */
  evaluate(bundle: Uint8Array, rows: Row[], baseModel: string): Promise<Record<string, unknown>>;
}

/** The points in a training run where a test can make the trainer die (see TRAINER_FAILPOINT_FILE). */
export type FailpointName = 'mid-epoch' | 'checkpoint-write' | 'final-evaluation';

/** Fault injection: `hit` returns at once unless a test armed that point, in which case the process dies there. */
export interface Failpoints {
  hit(name: FailpointName): void;
}
