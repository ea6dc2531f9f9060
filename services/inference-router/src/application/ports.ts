/**
 * What the router's use cases need from the outside, in plain shapes. Adapters
 * implement them over gRPC (model-servers, key-billing, the orchestrator),
 * Prisma (projects, deployments) and the outbox (metering).
 */

export interface Caller {
  teamId: string;
  keyId: string;
  userId: string;
}

export interface ModelRef {
  modelId: string;
  bucket: string;
  key: string;
}

export type JobStatus = 'requested' | 'running' | 'complete' | 'failed' | 'deployed' | 'cancelled';

/** A training job as the router needs it: visible to one team, servable once complete. */
export interface TrainedModel {
  jobId: string;
  teamId: string;
  status: JobStatus;
  baseModel: string;
  modelName: string;
  /** The servable bundle; null until the job completes. */
  bundle: { bucket: string; key: string } | null;
  completedAt: Date | null;
}

export interface TrainedModels {
  /** The job if it exists and belongs to the team; null otherwise. */
  get(teamId: string, jobId: string): Promise<TrainedModel | null>;
  /** The team's servable jobs, for /v1/models. */
  listServable(teamId: string): Promise<TrainedModel[]>;
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

export interface ModelFleet {
  /** Runs on a server that holds the model, or starts a load (rejects MODEL_WARMING, 425). */
  extract(
    ref: ModelRef,
    texts: string[],
    schema: Record<string, unknown> | undefined,
    options: ExtractOptions,
  ): Promise<{ results: Record<string, unknown>[]; inputTokens: number }>;
  /** Loads the model and resolves once it is ready; rejects with the reason it failed. */
  warm(ref: ModelRef, timeoutMs: number): Promise<void>;
  /** Streams a decoder's reply; `done()` (after the stream) gives the finish reason and token counts. */
  generate(
    ref: ModelRef,
    messages: ChatTurn[],
    options: GenerateOptions,
  ): { chunks: AsyncIterable<string>; done(): { finishReason: string; inputTokens: number; outputTokens: number } };
}

export interface ChatTurn {
  role: string;
  content: string;
}

export interface GenerateOptions {
  temperature: number;
  topP: number;
  maxTokens: number;
  stop: string[];
  seed: number;
  signal?: AbortSignal;
}

export interface InferenceRecord {
  inferenceId: string;
  caller: Caller;
  model: string;
  projectId: string;
  task: string;
  inputs: string[];
  schema: Record<string, unknown> | undefined;
  outputs: Record<string, unknown>[];
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
  costMicroCredits: bigint;
  startedAt: Date;
  completedAt: Date;
}

/** Records usage and the inference off the response path (UsageRecorded + InferenceCompleted). */
export interface Metering {
  record(inference: InferenceRecord): void;
}

export interface ProjectRow {
  id: string;
  teamId: string;
  name: string;
  createdAt: Date;
}

export type DeploymentStatus = 'deploying' | 'active' | 'failed' | 'replaced' | 'released';

export interface DeploymentRow {
  id: string;
  projectId: string;
  teamId: string;
  trainingJobId: string;
  bundleBucket: string;
  bundleKey: string;
  status: DeploymentStatus;
  reason: string | null;
  createdAt: Date;
  activatedAt: Date | null;
  endedAt: Date | null;
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
