import type { ChatInput, ChatPiece, EmbedRequest, EmbeddingsView } from './chat-ports';

export type * from './chat-ports';
export type * from './training-ports';

/**
 * What the gateway needs from key-billing, in plain shapes. The gateway holds
 * no business rules: every decision here is key-billing's, reached over gRPC.
 */

export interface Principal {
  keyId: string;
  teamId: string;
  userId: string;
}

export interface SessionView {
  user: { id: string; email: string; createdAt: string | null };
  team: { id: string; name: string };
  csrfToken: string;
  expiresAt: string | null;
}

export interface ApiKeyView {
  id: string;
  name: string;
  created_at: string | null;
  api_key_last_digits: string;
  expires_at: string | null;
  last_used_at: string | null;
  team_id: string | null;
  usage_tokens: number;
  usage_cost: number;
  request_count: number;
}

export interface CreatedApiKey {
  secret_key: string;
  id: string;
  name: string;
  created_at: string | null;
  api_key_last_digits: string;
  expires_at: string | null;
  team_id: string;
  payment_customer_created: boolean;
}

export interface UsageView {
  plan: string;
  balance_credits: number;
  account: Record<string, unknown>;
  recent_entries: Record<string, unknown>[];
  keys: ApiKeyView[];
}

export interface KeyBilling {
  signUp(email: string, password: string): Promise<{ user: SessionView['user']; team: SessionView['team'] }>;
  logIn(email: string, password: string): Promise<SessionView & { sessionToken: string }>;
  logOut(sessionToken: string): Promise<void>;
  getSession(sessionToken: string): Promise<SessionView>;
  createApiKey(principal: { teamId: string; userId: string }, name: string, expiresAt?: Date): Promise<CreatedApiKey>;
  listApiKeys(teamId: string): Promise<ApiKeyView[]>;
  revokeApiKey(teamId: string, keyId: string): Promise<{ success: boolean; message: string | null }>;
  /** The key's principal and, when the key expires, when (Unix ms): a cached answer must not outlive it. */
  authenticateApiKey(secret: string): Promise<{ principal: Principal; expiresAtMs: number | null }>;
  checkSpendable(teamId: string, estimatedCostMicroCredits: bigint, directModel: boolean): Promise<void>;
  getUsage(teamId: string): Promise<UsageView>;
  /** True when key-billing answers its health check. */
  ready(): Promise<boolean>;
}

/** A base model as the public catalog shows it (snake_case, credits). */
export interface BaseModelView {
  id: string;
  object: 'base_model';
  name: string;
  task: string;
  provider: string;
  description: string;
  supports_inference: boolean;
  supports_on_demand_inference: boolean;
  supports_training: boolean;
  training_types: string[];
  default_hyperparameters: { nr_epochs: number; learning_rate: number } | null;
  hyperparameter_bounds: {
    nr_epochs: { min: number; max: number };
    learning_rate: { min: number; max: number };
  } | null;
  pricing: {
    per_request_credits: number;
    per_1k_input_tokens_credits: number;
    per_1k_output_tokens_credits: number;
    /** Input served from / written to a prompt cache; 0 when the model has no cache. */
    per_1k_cache_read_tokens_credits: number;
    per_1k_cache_write_tokens_credits: number;
  };
  /** Shortest prefix (in the provider's tokens) an upstream model caches; 0 for built-in models. */
  min_cacheable_tokens: number;
}

/** Which public surface asked for an inference; recorded with it. */
export type InferenceTask =
  'extract' | 'ner' | 'classification' | 'json' | 'relations' | 'schema' | 'systemone' | 'project';

/** One extraction call, validated and with the public defaults applied. */
export interface InferRequest {
  modelId: string;
  projectId: string;
  texts: string[];
  schema: Record<string, unknown> | undefined;
  threshold: number;
  includeConfidence: boolean;
  includeSpans: boolean;
  task: InferenceTask;
}

export interface InferResult {
  inferenceId: string;
  model: string;
  results: Record<string, unknown>[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; cost_credits: number };
  latencyMs: number;
}

export interface ProjectView {
  id: string;
  name: string;
  created_at: string | null;
  active_training_job_id: string | null;
}

export interface DeploymentView {
  deployment_id: string;
  project_id: string;
  training_job_id: string;
  status: string;
  reason: string | null;
  created_at: string | null;
  activated_at: string | null;
  ended_at: string | null;
}

/** A model of a router project with its rates in credits per million tokens. */
export interface RankedModelView {
  model: string;
  input_per_million: number;
  output_per_million: number;
}

/** A project's router as the public API shows it. */
export interface ProjectRouterView {
  project_id: string;
  candidates: string[];
  reference_model: string;
  rules: { max_prompt_tokens: number | null };
  /** The candidates that can serve now, cheapest first: the order the policy tries them in. */
  ranking: RankedModelView[];
  reference: RankedModelView | null;
  updated_at: string | null;
}

/** What a team sets on a router project. */
export interface ProjectRouterInput {
  candidates: string[];
  referenceModel: string;
  /** 0: no limit. */
  maxPromptTokens: number;
}

/** One decoder call, validated and with the public defaults applied. */
export interface GenerateInput {
  modelId: string;
  projectId: string;
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
  temperature: number;
  topP: number;
  maxTokens: number;
  stop: string[];
  seed: number;
}

export type GeneratePiece =
  | { text: string }
  | {
      done: {
        inference_id: string;
        model: string;
        finish_reason: 'stop' | 'length';
        latency_ms: number;
        usage: InferResult['usage'];
      };
    };

/** What the gateway needs from the inference-router. */
export interface Inference {
  generate(principal: Principal, input: GenerateInput, signal: AbortSignal): AsyncIterable<GeneratePiece>;
  /** The compatible surfaces' one core; aborting `signal` cancels the call and the upstream request. */
  chat(principal: Principal, input: ChatInput, signal: AbortSignal): AsyncIterable<ChatPiece>;
  /** The input tokens `chat` with this input would be billed for (an estimate for upstream models); calls no model. */
  countChatTokens(principal: Principal, input: ChatInput): Promise<number>;
  ready(): Promise<boolean>;
  listBaseModels(principal: Principal): Promise<BaseModelView[]>;
  listModels(principal: Principal): Promise<{ id: string; object: 'model'; created: number; owned_by: string }[]>;
  infer(principal: Principal, request: InferRequest): Promise<InferResult>;
  /** Embeddings from an extraction model's encoder (unit length); `dimensions` 0 for the model's own. */
  embed(principal: Principal, request: EmbedRequest): Promise<EmbeddingsView>;
  createProject(principal: Principal, name: string): Promise<ProjectView>;
  listProjects(principal: Principal): Promise<ProjectView[]>;
  deleteProject(principal: Principal, projectId: string): Promise<void>;
  createDeployment(principal: Principal, projectId: string, trainingJobId: string): Promise<DeploymentView>;
  listDeployments(principal: Principal, projectId: string): Promise<DeploymentView[]>;
  listJobDeployments(principal: Principal, trainingJobId: string): Promise<DeploymentView[]>;
  setProjectRouter(principal: Principal, projectId: string, input: ProjectRouterInput): Promise<ProjectRouterView>;
  getProjectRouter(principal: Principal, projectId: string): Promise<ProjectRouterView>;
  deleteProjectRouter(principal: Principal, projectId: string): Promise<void>;
}

export interface DatasetVersionView {
  id: string;
  dataset_name: string;
  /** A version label such as "1" (the spec types it as a string); the gRPC contract's int32, written in decimal. */
  version_number: string;
  size: number;
  status: string;
  type: string;
  format: string;
  filename: string;
  /** Feedback datasets: corrections among the version's verdicts (the rest are confirmations); absent otherwise. */
  corrections?: number;
  created_at: string | null;
  updated_at: string | null;
  report: {
    total_rows: number;
    valid_rows: number;
    duplicate_rows: number;
    train_rows: number;
    heldout_rows: number;
    labels: string[];
    issues: { line: number; field: string; reason: string; fatal: boolean }[];
    issues_truncated: number;
    failure_reason: string | null;
  } | null;
}

/** What the gateway needs from the dataset service. */
export interface DatasetsPort {
  ready(): Promise<boolean>;
  createUpload(
    teamId: string,
    input: { name: string; type: string; format: string; filename: string },
  ): Promise<{ version: DatasetVersionView; uploadUrl: string; expiresAt: string | null; maxBytes: number }>;
  processUpload(teamId: string, name: string, versionNumber: number): Promise<DatasetVersionView>;
  /**
   * A new generation dataset version made from Files API files and processed before the answer (ready or failed
   * with its report); `trainingLines` tells which file a reported line is in.
   */
  importFiles(
    teamId: string,
    input: { datasetName: string; trainingFileId: string; validationFileId: string },
  ): Promise<{ version: DatasetVersionView; trainingLines: number }>;
  /** `status` is the newest version's; `latest_ready_version` the newest ready one's, which training uses. */
  list(teamId: string): Promise<
    {
      dataset_name: string;
      status: string;
      created_at: string | null;
      version_number: string;
      latest_ready_version: string | null;
    }[]
  >;
  versions(teamId: string, name: string): Promise<DatasetVersionView[]>;
  version(teamId: string, name: string, versionNumber: number): Promise<DatasetVersionView>;
  remove(teamId: string, name: string): Promise<void>;
  startGeneration(
    teamId: string,
    input: {
      name: string;
      entityTypes: string[];
      classifications: { task: string; labels: string[]; multi_label: boolean }[];
      domain: string;
      count: number;
      seed: number;
    },
  ): Promise<string>;
  generation(
    teamId: string,
    jobId: string,
  ): Promise<{
    job_id: string;
    status: string;
    progress: { generated: number; requested: number };
    dataset_name: string | null;
    version_number: string | null;
    error: string | null;
  }>;
}
