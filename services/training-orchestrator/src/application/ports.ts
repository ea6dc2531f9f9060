/** What the use cases need from the outside world; adapters implement these, tests fake them. */
import type { BlobStore } from '@whetstone/blobs';
import type { Logger } from '@whetstone/telemetry';
import type { Actor, Adaptation, AdaptationStatus, AdaptiveSettings } from '../domain/adaptation';
import type { Evaluation } from '../domain/evaluation';
import type { Checkpoint, DatasetSplit, Job, LogEntry, LogLine } from '../domain/job';
import type { JobStatus } from '../domain/job-status';

export type { BlobStore, Logger };

/** Fields a status change may set besides the status. */
export interface JobPatch {
  metrics?: Record<string, unknown>;
  failureReason?: string;
  artifactKey?: string;
  artifactSize?: number;
  manifestKey?: string;
  costMicroCredits?: bigint;
  resumeKey?: string | null;
  finishedAt?: Date;
  /** Forget the lease (owner, token, expiry). */
  clearLease?: boolean;
  /**
   * End the lease but remember its token: a trainer that was only slow may
   * take the job back with it (reclaim) until another trainer leases it.
   */
  expireLease?: boolean;
}

/** The training usage a completion bills; written with the completion, in the same transaction. */
export interface TrainingUsage {
  usageId: string;
  teamId: string;
  keyId: string;
  jobId: string;
  baseModel: string;
  exampleEpochs: number;
  costMicroCredits: bigint;
  occurredAt: Date;
}

/** One status change. */
export interface JobTransition {
  /** The move applies only while the job is in one of these (see domain/job-status sourcesOf). */
  from: JobStatus[];
  to: JobStatus;
  /** When given, the lease token must still hold the job. */
  token?: string;
  patch?: JobPatch;
  /** Billed in the same transaction as the change. */
  usage?: TrainingUsage;
}

/** Jobs. Every status change commits with its JobStatusChanged event (and usage, when given) in one transaction. */
/** Which of a team's jobs to list, newest first. */
export interface JobFilter {
  status?: JobStatus;
  projectId?: string;
  /** Only jobs created through the OpenAI-compatible fine-tuning API. */
  fineTuningOnly?: boolean;
  /** Only jobs listed after this one (newest first, ties by id descending). */
  after?: { createdAt: Date; id: string };
  limit: number;
  offset: number;
}

export interface JobRepository {
  create(job: Job): Promise<void>;
  get(teamId: string, id: string): Promise<Job | null>;
  getById(id: string): Promise<Job | null>;
  list(teamId: string, filter: JobFilter): Promise<{ rows: Job[]; total: number }>;
  /** Leases the oldest requested job (status → running, attempts + 1), or returns null. */
  leaseNext(owner: string, token: string, leaseUntil: Date): Promise<Job | null>;
  /** Extends a lease; false when the token no longer holds a running job. */
  renew(id: string, token: string, leaseUntil: Date, progress?: Record<string, unknown>): Promise<boolean>;
  /**
   * Gives a job whose lease expired back to the trainer that held it (status
   * requested → running, attempts unchanged), if nobody leased it since; false otherwise.
   */
  reclaim(id: string, token: string, leaseUntil: Date): Promise<boolean>;
  /** Applies a move; the job after it, or null when it did not apply. */
  transition(id: string, change: JobTransition): Promise<Job | null>;
  /** Running jobs whose lease ended before `now`. */
  expired(now: Date): Promise<Job[]>;
  /** Deletes the job (and its logs, checkpoints and evaluations) with a JobDeleted event; false when absent. */
  delete(teamId: string, id: string): Promise<boolean>;
}

export interface JobLogRepository {
  append(jobId: string, source: string, lines: LogLine[]): Promise<void>;
  /** Entries oldest first, after `afterId` when given; at most 5,000. */
  list(jobId: string, afterId?: string): Promise<LogEntry[]>;
}

export interface CheckpointRepository {
  /** Inserts, or replaces the one with the same checkpoint id. */
  put(checkpoint: Checkpoint): Promise<void>;
  /** Highest step first. */
  listByJob(jobId: string): Promise<Checkpoint[]>;
  findByUuid(teamId: string, uuid: string): Promise<(Checkpoint & { job: Job }) | null>;
}

export interface EvaluationRepository {
  create(evaluation: Evaluation): Promise<void>;
  get(teamId: string, id: string): Promise<Evaluation | null>;
  getById(id: string): Promise<Evaluation | null>;
  /** Leases the oldest queued evaluation (attempts + 1), or returns null. */
  leaseNext(owner: string, token: string, leaseUntil: Date): Promise<Evaluation | null>;
  renew(id: string, token: string, leaseUntil: Date): Promise<boolean>;
  /** Ends a leased evaluation; false when the token no longer holds it. */
  finish(
    id: string,
    token: string,
    result: { status: 'complete'; metrics: Record<string, unknown> } | { status: 'failed'; error: string },
  ): Promise<boolean>;
  /** Back to the queue (lease forgotten); false when the token (if given) no longer holds it. */
  release(id: string, token?: string): Promise<boolean>;
  /** Running evaluations whose lease ended before `now`. */
  expired(now: Date): Promise<Evaluation[]>;
}

/** What a dataset holds: extraction spans, classification labels, or chat (generation) rows. */
export type DatasetKind = 'extraction' | 'classification' | 'generation';

export interface DatasetResolver {
  /** The newest ready version's splits and the dataset's kind; NotFound or FailedPrecondition otherwise. */
  resolve(teamId: string, name: string): Promise<DatasetSplit & { type: DatasetKind }>;
}

export interface SpendCheck {
  /** Throws the billing denial (402/403) when the team cannot start work of this cost. */
  checkSpendable(teamId: string, costMicroCredits: bigint): Promise<void>;
}

/** A Hugging Face-compatible model hub. */
export interface ModelHub {
  push(input: {
    repoId: string;
    token: string;
    private: boolean;
    files: { path: string; bytes: Uint8Array }[];
    message: string;
  }): Promise<{ url: string; commit: string }>;
}

export interface Clock {
  now(): Date;
}

/**
 * Wakes trainers waiting for work in this process when work is queued here;
 * waiters also wake on a coarse timer, for work queued by another replica.
 */
export interface WorkSignal {
  notify(): void;
  /** Resolves on notify, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The principal a public request acts for; every read and write is scoped to its team. */
export interface Caller {
  teamId: string;
  /** Empty for dashboard-session calls. */
  keyId: string;
  userId: string;
}

/** A project's adaptive settings, with the caller who set them (automatic adaptations act for that caller). */
export interface StoredAdaptiveSettings {
  settings: AdaptiveSettings;
  actor: Actor;
}

export interface AdaptiveSettingsRepository {
  get(projectId: string): Promise<StoredAdaptiveSettings | null>;
  /** Replaces the project's settings; `updatedAt` is the time stored. */
  put(actor: Actor, settings: AdaptiveSettings): Promise<AdaptiveSettings>;
}

/** Fields a move of an adaptation may set besides its status. */
export interface AdaptationPatch {
  baselineMetrics?: Record<string, unknown>;
  candidateMetrics?: Record<string, unknown>;
  controlMetrics?: Record<string, unknown>;
  decisionReason?: string;
  gain?: number;
  decidedAt?: Date;
}

export interface AdaptationRepository {
  /** Inserts it; false (nothing written) when another adaptation of the project is in progress. */
  create(adaptation: Adaptation): Promise<boolean>;
  get(teamId: string, id: string): Promise<Adaptation | null>;
  /** Newest first. */
  list(teamId: string, projectId: string, limit: number): Promise<Adaptation[]>;
  /** Every adaptation in training, evaluating or promoting, oldest first (the loop advances them). */
  inProgress(): Promise<Adaptation[]>;
  /** The project's newest adaptation that trained (any status but failed), or null. */
  latestTrained(projectId: string): Promise<Adaptation | null>;
  /** The adaptation whose candidate is this job, or null. */
  byCandidate(jobId: string): Promise<Adaptation | null>;
  /** Moves it if it is still in `from`; false otherwise (another replica moved it first). */
  transition(id: string, from: AdaptationStatus, to: AdaptationStatus, patch?: AdaptationPatch): Promise<boolean>;
}

/** The dataset service's feedback datasets. */
export interface FeedbackVersioner {
  /** Cuts a version of the project's pending feedback now; the version number cut, or null when nothing was pending. */
  versionNow(teamId: string, projectId: string): Promise<number | null>;
}

/** Projects and deployments live in the inference-router. */
export interface ProjectsPort {
  /** UUID of the job the project's active deployment serves, or '' when none; NotFound for another team's project. */
  activeJob(actor: Actor, projectId: string): Promise<string>;
  /** Deploys the job to the project; the router swaps the active deployment with no gap once it is warm. */
  deploy(actor: Actor, projectId: string, jobId: string): Promise<void>;
  /** Whether an active deployment of the team's job serves any of its projects now. */
  servesAnywhere(teamId: string, jobId: string): Promise<boolean>;
}
