/**
 * What the router's use cases need from the outside, in plain shapes. Adapters
 * implement them over gRPC (model-servers, key-billing), Prisma (projects,
 * deployments, the trained-model read model) and the outbox (metering).
 */
import type { DeploymentRow, ProjectRow } from '../domain/deployment';
import type { Caller, ChatTurn, FinishReason, GenerateOptions, InferenceTask, ModelRef } from '../domain/model';
import type { TrainedModel } from '../domain/trained-model';

/** The read model of training jobs, fed by the orchestrator's job events. */
export interface TrainedModels {
  /** The job if it exists and belongs to the team; null otherwise. */
  get(teamId: string, jobId: string): Promise<TrainedModel | null>;
  /** The team's servable jobs, for /v1/models. */
  listServable(teamId: string): Promise<TrainedModel[]>;
  /** Stores a job's state unless a newer one is held; false when it was older (or the job was deleted). */
  upsert(model: TrainedModel): Promise<boolean>;
  /** Forgets a deleted job for good: later (replayed) status events do not bring it back. */
  markDeleted(jobId: string, teamId: string, at: Date): Promise<void>;
}

export interface Billing {
  /** Rejects with a billing denial (402/403) when the team cannot spend this much. */
  checkSpendable(teamId: string, costMicroCredits: bigint, directModel: boolean): Promise<void>;
}

export interface ExtractOptions {
  threshold: number;
  includeConfidence: boolean;
  includeSpans: boolean;
}

export interface GenerateStream {
  chunks: AsyncIterable<string>;
  /** After the stream: why it ended and the token counts. */
  done(): { finishReason: FinishReason; inputTokens: number; outputTokens: number };
}

export interface ModelFleet {
  /**
   * Runs on a server that holds the model, or starts a load (rejects MODEL_WARMING, 425). The schema (empty: the
   * trained one) and the results (a JSON array, one per text) stay JSON bytes: the router does not look inside.
   */
  extract(
    ref: ModelRef,
    texts: string[],
    schemaJson: Uint8Array,
    options: ExtractOptions,
  ): Promise<{ resultsJson: Uint8Array; inputTokens: number }>;
  /** Loads the model and resolves once it is ready; rejects with the reason it failed. */
  warm(ref: ModelRef, timeoutMs: number): Promise<void>;
  /** Streams a decoder's reply. */
  generate(ref: ModelRef, messages: ChatTurn[], options: GenerateOptions): GenerateStream;
}

export interface InferenceRecord {
  inferenceId: string;
  caller: Caller;
  /** Base model id or training job id that served it. */
  model: string;
  /** The built-in base: the model itself, or the job's base model. */
  baseModel: string;
  /** The training job that served it; empty for a base model. */
  trainingJobId: string;
  projectId: string;
  task: InferenceTask;
  /** Extraction texts; for a decoder, its turns as "role: content" lines (the turns themselves are in messages). */
  inputs: string[];
  /** A decoder's conversation; empty for extraction. */
  messages: ChatTurn[];
  schema: Record<string, unknown> | undefined;
  outputs: Record<string, unknown>[];
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
  costMicroCredits: bigint;
  startedAt: Date;
  completedAt: Date;
}

/** Records usage and the inference (UsageRecorded + InferenceCompleted) before the call is answered. */
export interface Metering {
  /**
   * Resolves once both events are durable, so an answered call is always billed
   * and its record exists. Rejects (503, retryable) when they could not be
   * written; then nothing was recorded and the call must fail, not be answered.
   */
  record(inference: InferenceRecord): Promise<void>;
}

export interface ProjectStore {
  createProject(row: ProjectRow): Promise<ProjectRow>;
  listProjects(teamId: string): Promise<(ProjectRow & { activeTrainingJobId: string | null })[]>;
  getProject(teamId: string, projectId: string): Promise<ProjectRow | null>;
  deleteProject(teamId: string, projectId: string): Promise<boolean>;
  createDeployment(row: DeploymentRow): Promise<DeploymentRow>;
  listDeployments(projectId: string): Promise<DeploymentRow[]>;
  listJobDeployments(teamId: string, trainingJobId: string): Promise<DeploymentRow[]>;
  activeDeployment(projectId: string): Promise<DeploymentRow | null>;
  pendingDeployments(): Promise<DeploymentRow[]>;
  /** deploying → active; the previously active one becomes replaced; emits DeploymentActivated. False if no longer deploying. */
  activate(deploymentId: string, at: Date): Promise<boolean>;
  /** deploying → failed with a reason; emits DeploymentFailed. */
  fail(deploymentId: string, reason: string, at: Date): Promise<void>;
  /** Every deploying or active deployment of the job → released (the job was deleted). */
  releaseJob(trainingJobId: string, reason: string, at: Date): Promise<number>;
}

export interface Ids {
  uuid(): string;
}
