/** What the gateway needs from inference-history, in the public JSON's shapes. */
import type { Principal } from './ports';

/** The public surfaces a record names, as records show them (and `GET /inferences?surface=` takes). */
/** The public id of an OpenAI conversation is this prefix and its UUID. */
export const CONVERSATION_PREFIX = 'conv_';

export const SURFACES = [
  'native',
  'gliner-2',
  'systemone',
  'project',
  'chat-completions',
  'messages',
  'completions',
  'responses',
] as const;
export type SurfaceName = (typeof SURFACES)[number];

/** One recorded turn of a decoder conversation. */
export interface RecordedTurnView {
  role: string;
  content: string;
  tool_calls?: { id: string; name: string; arguments: string }[];
  tool_call_id?: string;
}

/** One stored inference as GET /inferences and GET /inferences/:id show it (docs/api.md). */
export interface InferenceRecordView {
  id: string;
  object: 'inference';
  inference_id: string;
  created_at: string | null;
  completed_at: string | null;
  team_id: string;
  key_id: string | null;
  user_id: string | null;
  project_id: string | null;
  model_id: string;
  training_job_id: string | null;
  base_model: string;
  task: string;
  surface: string;
  /** The input text of a single-text call; null for batches and decoder calls. */
  text: string | null;
  inputs: string[];
  /** A decoder call's turns; `tool_calls` on an assistant turn that called tools, `tool_call_id` on a tool turn. */
  messages: RecordedTurnView[] | null;
  schema: Record<string, unknown> | null;
  /** The result of a single-text call (or a decoder's reply); null for batches, which use outputs. */
  output: Record<string, unknown> | null;
  outputs: Record<string, unknown>[];
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_tokens: number;
    cache_write_tokens: number;
    reasoning_tokens: number;
    total_tokens: number;
    cost_credits: number;
  };
  latency_ms: number;
  status: string;
  error_code: string | null;
  llmaj_score: number | null;
  /** null: not sampled for judging; pending, scored or failed. */
  judge_status: 'pending' | 'scored' | 'failed' | null;
  judge_rationale: string | null;
  /** builtin (a formula, not an LLM) or llm; null until scored. */
  judge_kind: 'builtin' | 'llm' | null;
  judge_model: string | null;
  /** `REASON: message` when judge_status is failed. */
  judge_error: string | null;
  judged_at: string | null;
  feedback: FeedbackView | null;
  /** OpenAI's `metadata` of a stored compatible call; `{}` when none. */
  metadata: Record<string, string>;
  /** The OpenAI conversation (`conv_…`) a Responses call belongs to; null for none. */
  conversation_id: string | null;
}

/** One project's judging settings, as PUT and GET /projects/:project_id/judge show them. */
export interface JudgeSettingsView {
  project_id: string;
  enabled: boolean;
  sample_rate: number;
  kind: 'builtin' | 'llm';
  judge_model: string | null;
  updated_at: string | null;
}

export interface FeedbackView {
  inference_id: string;
  human_verdict: 'correct' | 'incorrect';
  human_feedback_at: string | null;
  corrected_output: unknown;
  notes: string | null;
}

/** GET /inferences filters, parsed; undefined means "not given". */
export interface InferenceFilter {
  limit: number;
  offset: number;
  modelId?: string | undefined;
  task?: string | undefined;
  projectId?: string | undefined;
  trainingJobId?: string | undefined;
  latencyMin?: number | undefined;
  latencyMax?: number | undefined;
  llmajScoreMin?: number | undefined;
  llmajScoreMax?: number | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  surface?: SurfaceName | undefined;
  metadata?: Record<string, string> | undefined;
  oldestFirst?: boolean | undefined;
  /** Cursor: an inference id; only records after it in the page's order. */
  afterId?: string | undefined;
  /** Count only up to limit + 1 (has_more, not a total). */
  countToPage?: boolean | undefined;
}

/** What the gateway needs from inference-history. */
export interface HistoryPort {
  ready(): Promise<boolean>;
  list(
    principal: Principal,
    filter: InferenceFilter,
  ): Promise<{ records: InferenceRecordView[]; total: number; totalCapped: boolean }>;
  get(principal: Principal, inferenceId: string): Promise<InferenceRecordView>;
  submitFeedback(
    principal: Principal,
    inferenceId: string,
    input: { verdict: 'correct' | 'incorrect'; correctedOutput: unknown; notes: string },
  ): Promise<FeedbackView>;
  getFeedback(principal: Principal, inferenceId: string): Promise<FeedbackView>;
  /** Replaces a record's metadata; NotFound as get. Returns the record updated. */
  updateMetadata(
    principal: Principal,
    inferenceId: string,
    metadata: Record<string, string>,
  ): Promise<InferenceRecordView>;
  /** Deletes the record for good (content, feedback, judge state); NotFound as get. Returns its id. */
  delete(principal: Principal, inferenceId: string): Promise<string>;
  getJudgeSettings(principal: Principal, projectId: string): Promise<JudgeSettingsView>;
  setJudgeSettings(
    principal: Principal,
    settings: { projectId: string; enabled: boolean; sampleRate: number; kind: 'builtin' | 'llm'; judgeModel: string },
  ): Promise<JudgeSettingsView>;
}

/** What a conversation item is (OpenAI's Conversations API items this gateway serves). */
export type ConversationItemType = 'message' | 'function_call' | 'function_call_output';

/** One item of a conversation; a message has `role` and `texts`, a call `callId`, `name`, `arguments`, an output `callId`, `output`. */
export interface ConversationItemView {
  id: string;
  type: ConversationItemType;
  role: string;
  texts: string[];
  callId: string;
  name: string;
  arguments: string;
  output: string;
  createdAt: Date;
}

/** An item to add: the service mints its id and time. */
export type NewConversationItem = Omit<ConversationItemView, 'id' | 'createdAt'>;

export interface ConversationView {
  id: string;
  createdAt: Date;
  metadata: Record<string, string>;
}

/** inference-history's conversations; another team's is NotFound CONVERSATION_NOT_FOUND. */
export interface ConversationsPort {
  create(
    principal: Principal,
    metadata: Record<string, string>,
    items: NewConversationItem[],
  ): Promise<{ conversation: ConversationView; items: ConversationItemView[] }>;
  get(principal: Principal, conversationId: string): Promise<ConversationView>;
  update(principal: Principal, conversationId: string, metadata: Record<string, string>): Promise<ConversationView>;
  delete(principal: Principal, conversationId: string): Promise<string>;
  /**
   * Appends the items; with an idempotency key (a UUID) a repeat of an append that was stored adds nothing and
   * answers what it stored, so the call may be retried.
   */
  addItems(
    principal: Principal,
    conversationId: string,
    items: NewConversationItem[],
    idempotencyKey?: string,
  ): Promise<ConversationItemView[]>;
  /** A page in position order (`ascending`) or newest first; `afterId` an item of the conversation. */
  listItems(
    principal: Principal,
    conversationId: string,
    page: { limit: number; afterId?: string | undefined; ascending: boolean },
  ): Promise<{ items: ConversationItemView[]; hasMore: boolean }>;
  getItem(principal: Principal, conversationId: string, itemId: string): Promise<ConversationItemView>;
  deleteItem(principal: Principal, conversationId: string, itemId: string): Promise<ConversationView>;
}
