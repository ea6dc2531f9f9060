/**
 * What the router's use cases need from the outside, in plain shapes. Adapters
 * implement them over gRPC (model-servers, key-billing), Prisma (projects,
 * deployments, the trained-model read model) and the outbox (metering).
 */
import type { UpstreamModelRef } from '@whetstone/catalog';
import type { RecordedTurn } from '@whetstone/proto/inference/v1';
import type {
  CacheMarker,
  ChatDelta,
  ChatFinishReason,
  ChatMessage,
  ChatSurface,
  ContentBlock,
  TokenLogprob,
  TokenUsage,
  ToolChoice,
  ToolDefinition,
} from '../domain/chat';
import type { BatchKind, BatchRequestState, BatchSource, ChatBatch } from '../domain/batch';
import type { DeploymentRow, ProjectRow } from '../domain/deployment';
import type { ProjectRouterRow } from '../domain/routing';
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
  /** The reply's pieces; `logprobs` and `promptLogprobs` are empty unless the options asked for them. */
  chunks: AsyncIterable<{ text: string; logprobs: TokenLogprob[]; promptLogprobs: TokenLogprob[] }>;
  /** After the stream: why it ended and the token counts (input includes the cache read and written). */
  done(): {
    finishReason: FinishReason;
    /** The stop sequence that ended the reply; empty when none did. */
    stopSequence: string;
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
  };
}

/** Where a cacheable prompt prefix ends: every turn before `turn`, and `chars` UTF-16 code units of that turn. */
export interface CacheBreakpoint {
  turn: number;
  chars: number;
  ttlSeconds: number;
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
  /** Each text's embedding from the model's encoder, on a server that holds it (or MODEL_WARMING, as extract). */
  embed(ref: ModelRef, texts: string[]): Promise<{ vectors: number[][]; dimensions: number; inputTokens: number }>;
  /** Loads the model and resolves once it is ready; rejects with the reason it failed. */
  warm(ref: ModelRef, timeoutMs: number): Promise<void>;
  /** Streams a decoder's reply; the prefix up to each breakpoint may come from, or go to, the prefix cache. */
  generate(
    ref: ModelRef,
    messages: ChatTurn[],
    options: GenerateOptions,
    breakpoints?: CacheBreakpoint[],
  ): GenerateStream;
}

/** One conversation for an upstream model, as the chat core hands it to a provider adapter. */
export interface UpstreamCall {
  /** The catalog id, for messages. */
  modelId: string;
  model: UpstreamModelRef;
  system: ContentBlock[];
  messages: ChatMessage[];
  tools: ToolDefinition[];
  toolsCache?: CacheMarker;
  /** JSON output asked for, as OpenAI's `response_format`; a dialect that cannot ask for it refuses the call. */
  responseFormat?: Record<string, unknown>;
  /** Whether and which tool the model must call, each dialect in its own fields; unset lets it choose. */
  toolChoice?: ToolChoice;
  /** Sampling, and the signal that aborts the upstream request when the caller goes away. */
  options: GenerateOptions;
}

/** One embeddings call for an upstream embedding model. */
export interface UpstreamEmbedCall {
  /** The catalog id, for messages. */
  modelId: string;
  model: UpstreamModelRef;
  texts: string[];
  /** The length asked for (sent as the provider's `dimensions`); 0: the model's own. */
  dimensions: number;
}

/** An upstream embedding model's answer: one vector per text, in the texts' order, and the tokens it counted. */
export interface UpstreamEmbeddings {
  vectors: number[][];
  inputTokens: number;
}

/**
 * What an upstream stream yields: reply pieces as they arrive, usage as the
 * provider reports it (each report replaces the fields it carries), and the
 * finish reason at the end.
 */
export type UpstreamEvent =
  | { delta: ChatDelta }
  | { usage: Partial<TokenUsage> }
  /** `stopSequence`: the stop sequence that ended the reply, when the server says which. */
  | { finish: ChatFinishReason; stopSequence?: string };

export interface Upstreams {
  /**
   * Streams the reply of the provider that serves the model, relaying each
   * piece as it arrives. Rejects with a typed error: ResourceExhausted (429),
   * Unavailable UPSTREAM_OVERLOADED or DEPENDENCY_UNAVAILABLE, InvalidArgument
   * with the provider's message, FailedPrecondition for a refused address.
   */
  stream(call: UpstreamCall): AsyncIterable<UpstreamEvent>;
  /** Embeds texts with an OpenAI-compatible provider's embedding model; rejects with the same typed errors. */
  embed(call: UpstreamEmbedCall): Promise<UpstreamEmbeddings>;
}

export type { RecordedTurn };

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
  /** A decoder's conversation; empty for extraction. Roles: system, user, assistant or tool. */
  messages: RecordedTurn[];
  schema: Record<string, unknown> | undefined;
  outputs: Record<string, unknown>[];
  latencyMs: number;
  /** Every input token, the cache classes included. */
  inputTokens: number;
  outputTokens: number;
  costMicroCredits: bigint;
  startedAt: Date;
  completedAt: Date;
  /** Of inputTokens, read from / written to a prompt cache; of outputTokens, reasoning. Unset: 0. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  /** The compatible surface of a chat call; unset: derived from the project and task. */
  surface?: ChatSurface;
  /** False: only the usage is recorded (a chat call without `store: true`), no history record. Unset: true. */
  stored?: boolean;
  /** OpenAI's `metadata` of a stored compatible call. */
  metadata?: Record<string, string>;
  /** UUID of the OpenAI conversation a stored Responses call belongs to. */
  conversationId?: string;
  /** Set when the call failed after it was metered (e.g. client_disconnected); the record's status is failed. */
  errorCode?: string;
}

/** Records usage and, when stored, the inference (UsageRecorded + InferenceCompleted) before the call is answered. */
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
  /** The team's project's router; null when the project is not a router (or not the team's). */
  getRouter(teamId: string, projectId: string): Promise<ProjectRouterRow | null>;
  /** Creates or replaces the router of a project the caller has checked is the team's. */
  putRouter(row: ProjectRouterRow): Promise<ProjectRouterRow>;
  /** Turns routing off; false when the project had no router. */
  deleteRouter(teamId: string, projectId: string): Promise<boolean>;
}

export interface Ids {
  /** A UUIDv7: time-ordered, so history can tell an id still on its way from an unknown one (read your writes). */
  uuid(): string;
  /**
   * A UUIDv4, for a chat call that is not stored: it names no record, and history answers such an id unknown at
   * once instead of waiting for a record that will never come (GET /v1/responses/:id, previous_response_id).
   */
  ephemeral(): string;
}

/** One request of a new batch: its Chat call encoded by the transport (the store keeps it opaque). */
/** What a batch request runs; its `request` bytes are the transport's encoding of that call. */
export type BatchCall = 'chat' | 'embed';

export interface NewBatchRequest {
  customId: string;
  call: BatchCall;
  /** Minted now, so a request run twice (its worker died) is billed once under the same usage key. */
  responseId: string;
  request: Uint8Array;
}

/** A request a worker has claimed (for `leaseMs`), with the batch's caller, who is billed for it. */
export interface ClaimedBatchRequest {
  batchId: string;
  /** What the batch stands for: a background Response is priced as the direct call it is, the others as a batch. */
  kind: BatchKind;
  position: number;
  customId: string;
  responseId: string;
  call: BatchCall;
  request: Uint8Array;
  /** This claim included. */
  attempts: number;
  caller: Caller;
}

/** An ended request's result as stored (encoded by the transport); null for canceled and expired ones. */
export interface BatchResultRow {
  customId: string;
  state: BatchRequestState;
  result: Uint8Array | null;
}

export interface BatchPage {
  kind: BatchKind;
  limit: number;
  /** Older than this batch (the next page of a newest-first list). */
  afterId?: string | undefined;
  /** Newer than this batch (the previous page). */
  beforeId?: string | undefined;
}

/** Batches and their requests, in the router's schema. Another team's batch reads as absent (null or false). */
export interface ChatBatchStore {
  create(
    batch: {
      id: string;
      kind: BatchKind;
      caller: Caller;
      createdAt: Date;
      expiresAt: Date;
      source: BatchSource | null;
    },
    requests: NewBatchRequest[],
  ): Promise<void>;
  get(teamId: string, batchId: string): Promise<ChatBatch | null>;
  /** The request a response id was minted for, with its batch; null when none is the team's. */
  findCall(
    teamId: string,
    responseId: string,
  ): Promise<{
    batch: ChatBatch;
    attempts: number;
    call: BatchCall;
    request: Uint8Array;
    result: BatchResultRow;
  } | null>;
  /** Newest first, of one kind; a cursor that names no batch of the team is null. */
  list(teamId: string, page: BatchPage): Promise<{ batches: ChatBatch[]; hasMore: boolean } | null>;
  /** Marks the batch cancelled (once) and ends its pending requests that no worker holds as canceled. */
  cancel(teamId: string, batchId: string, at: Date): Promise<ChatBatch | null>;
  /** Deletes the batch with its requests; false when it is not the team's. */
  delete(teamId: string, batchId: string): Promise<boolean>;
  /** Ended requests from `offset` in request order. */
  results(teamId: string, batchId: string, offset: number, limit: number): Promise<BatchResultRow[]>;
  /** Ends pending requests no worker holds of cancelled batches (canceled) and of expired ones (expired). */
  sweep(at: Date): Promise<number>;
  /** Claims due requests of live batches for `leaseMs` (SKIP LOCKED: replicas take different ones). */
  claim(limit: number, leaseMs: number): Promise<ClaimedBatchRequest[]>;
  /**
   * Pushes a claimed request's lease `leaseMs` ahead while its worker still holds it (pending, and not claimed again
   * since: its attempt count is still `attempts`); false when it does not.
   */
  renewLease(batchId: string, position: number, attempts: number, leaseMs: number): Promise<boolean>;
  /** Stores a request's result; false when it had already ended (it ran past its lease and was swept). */
  finish(
    batchId: string,
    position: number,
    state: 'succeeded' | 'errored',
    result: Uint8Array,
    at: Date,
  ): Promise<boolean>;
  /** Leaves a request pending until `at` (a retryable failure). */
  retryLater(batchId: string, position: number, at: Date): Promise<void>;
}
