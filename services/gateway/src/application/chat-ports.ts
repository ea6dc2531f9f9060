import type { Principal } from './ports';

/** The compatible surfaces' chat core, in plain shapes: what the gateway sends the router and gets back. */

/** A text block of a chat turn; `cacheTtlSeconds` is set when a cache marker ends the prefix here (0 = default). */
export interface ChatBlock {
  text: string;
  cacheTtlSeconds?: number;
}

/** One tool call an assistant made; `arguments` is a JSON string. */
export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatTurn {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: ChatBlock[];
  toolCalls: ChatToolCall[];
  /** For a tool turn: the call it answers. */
  toolCallId: string;
}

export interface ChatTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The public route family a chat call came through; history records it. */
export type ChatSurface = 'chat_completions' | 'completions' | 'responses' | 'messages';

/** One conversation for the router's chat core, translated from a compatible surface with its defaults applied. */
/**
 * What a call asks of the model's tool use: `auto` (it chooses), `required` (some tool), `tool` (the one `name`
 * names); `parallelToolCalls` false asks for at most one call per turn, unset leaves the provider's default.
 */
export interface ChatToolChoice {
  mode: 'auto' | 'required' | 'tool';
  name?: string;
  parallelToolCalls?: boolean;
}

export interface ChatInput {
  model: string;
  system: ChatBlock[];
  messages: ChatTurn[];
  temperature: number;
  topP: number;
  /** 0: the server's default. */
  maxTokens: number;
  stop: string[];
  seed: number;
  /** OpenAI's penalties (−2 to 2) and Anthropic's top_k; unset: off. */
  frequencyPenalty?: number;
  presencePenalty?: number;
  topK?: number;
  /** OpenAI's `logit_bias`: token id to a bias from −100 to 100; unset: none. */
  logitBias?: Record<number, number>;
  tools: ChatTool[];
  /** Whether and which tool the model must call; unset lets it choose (tool-choice.ts). */
  toolChoice?: ChatToolChoice;
  /** Set when a cache marker ends the prefix after the tool definitions. */
  toolsCacheTtlSeconds?: number;
  /** The extraction extension: the reply is the JSON result. */
  schema?: Record<string, unknown>;
  /** JSON output asked for, in chat completions' `response_format` shape (never `text`). */
  responseFormat?: Record<string, unknown>;
  surface: ChatSurface;
  store: boolean;
  /** OpenAI's `metadata`, kept with a stored call. */
  metadata?: Record<string, string>;
  /** UUID of the OpenAI conversation a Responses call belongs to, kept with a stored call. */
  conversationId?: string;
  includeReasoning: boolean;
  /** When set, each reply token's log probability with this many of the most likely tokens at its place (0–20). */
  logprobs?: number;
  /**
   * With `logprobs`, the prompt's own tokens' log probabilities too (completions' `echo`; built-in decoders only),
   * and with `promptOnly` nothing generated (`max_tokens: 0`).
   */
  promptLogprobs?: boolean;
  promptOnly?: boolean;
}

/** A tool-call delta: id and name on a call's first delta, argument text appended. */
export interface ChatToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

export interface ChatUsageView {
  /** Input neither read from nor written to a prompt cache. */
  input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_credits: number;
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** What the last piece of a chat stream says about the whole call. */
export interface ChatDone {
  finishReason: ChatFinishReason;
  /** The stop sequence that ended the reply, when the model said which (built-in decoders, Messages-API models). */
  stopSequence: string | null;
  model: string;
  usage: ChatUsageView;
  /** Set only when the inference was stored. */
  inferenceId: string | null;
  routedModel: string | null;
  savings: { input_per_million: number; output_per_million: number } | null;
  latencyMs: number;
}

/** One of the most likely tokens at a place of a reply, in OpenAI's shape (`bytes:\\xNN` for a partial character). */
export interface ChatTopLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

/** A reply token with its log probability and the most likely tokens at its place: OpenAI's logprobs content item. */
export interface ChatTokenLogprob extends ChatTopLogprob {
  top_logprobs: ChatTopLogprob[];
}

/** One streamed piece of a chat reply; `done` only on the last. */
export interface ChatPiece {
  responseId: string;
  text: string;
  reasoning: string;
  toolCalls: ChatToolCallDelta[];
  /** The tokens of `text` when the call asked for log probabilities; empty otherwise. */
  logprobs: ChatTokenLogprob[];
  /** The prompt's tokens, on one piece before any text, when the call asked for `promptLogprobs`. */
  promptLogprobs?: ChatTokenLogprob[];
  done?: ChatDone;
}

/** Where a message batch is (Anthropic's `processing_status`). */
export type ChatBatchStatus = 'in_progress' | 'canceling' | 'ended';

/** What an OpenAI batch was made from. */
export interface ChatBatchSource {
  /** UUID of the uploaded input file. */
  inputFileId: string;
  /** `/v1/chat/completions`, `/v1/responses`, `/v1/completions` or `/v1/embeddings`. */
  endpoint: string;
  metadata: Record<string, string>;
  /** What was wrong with the input file; a batch with errors holds no requests and has failed. */
  errors?: BatchInputError[];
}

/** A problem of an OpenAI batch's input file: OpenAI's `{code, message, line, param}` (`line` 0 and `param` '' for none). */
export interface BatchInputError {
  code: string;
  message: string;
  line: number;
  param: string;
}

/** A batch of chat calls run in the background (Anthropic's Message Batches, OpenAI's Batch API). */
export interface ChatBatchView {
  id: string;
  /** A message batch, an OpenAI background Response (a batch of one) or an OpenAI batch over an input file. */
  kind: 'messages' | 'background_response' | 'openai_batch';
  status: ChatBatchStatus;
  counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
  createdAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  cancelInitiatedAt: Date | null;
  /** An OpenAI batch's input file, endpoint and metadata; null for other kinds. */
  source: ChatBatchSource | null;
}

/** An embeddings call: 1–2,048 texts; `dimensions` 0 for the model's own. */
export interface EmbedRequest {
  modelId: string;
  texts: string[];
  dimensions: number;
}

/** Unit-length vectors, one per text, with the tokens billed. */
export interface EmbeddingsView {
  model: string;
  vectors: number[][];
  dimensions: number;
  inputTokens: number;
}

/**
 * What one request of a batch runs: a chat call, or (an OpenAI batch of `/v1/embeddings`) an embeddings call with the
 * surface fields its result returns as `requestMetadata`.
 */
export type BatchCall = { input: ChatInput } | { embed: EmbedRequest; metadata: Record<string, string> };

/** One request of a batch: its custom id and call. */
export type BatchRequestInput = { customId: string } & BatchCall;

/** One request's result: the whole reply as one piece (or the embeddings), the error, or neither (canceled or expired). */
export type ChatBatchResultView =
  | {
      customId: string;
      outcome: 'succeeded';
      reply: ChatPiece;
      requestedModel: string;
      requestMetadata: Record<string, string>;
    }
  | {
      customId: string;
      outcome: 'succeeded';
      embeddings: EmbeddingsView;
      /** The id minted for the request when the batch was made. */
      responseId: string;
      requestedModel: string;
      requestMetadata: Record<string, string>;
    }
  | { customId: string; outcome: 'errored'; error: Error }
  | { customId: string; outcome: 'canceled' | 'expired' };

/** The router's message batches; another team's batch is NotFound. */
export interface ChatBatches {
  create(
    principal: Principal,
    requests: BatchRequestInput[],
    kind?: ChatBatchView['kind'],
    source?: ChatBatchSource,
  ): Promise<{ batch: ChatBatchView; responseIds: string[] }>;
  /** The request a response id was minted for (a background Response); null when the team has none. */
  findCall(
    principal: Principal,
    responseId: string,
  ): Promise<{
    batch: ChatBatchView;
    started: boolean;
    result: ChatBatchResultView | null;
    /** The model the request named, and its metadata. */
    model: string;
    metadata: Record<string, string>;
  } | null>;
  get(principal: Principal, batchId: string): Promise<ChatBatchView>;
  /** Newest first, of one kind (message batches unless named); `afterId` pages to older ones, `beforeId` to newer. */
  list(
    principal: Principal,
    page: {
      limit: number;
      afterId?: string | undefined;
      beforeId?: string | undefined;
      kind?: ChatBatchView['kind'];
    },
  ): Promise<{ batches: ChatBatchView[]; hasMore: boolean }>;
  cancel(principal: Principal, batchId: string): Promise<ChatBatchView>;
  delete(principal: Principal, batchId: string): Promise<string>;
  /** A page of an ended batch's results in request order; `nextOffset` 0 when there are no more. */
  results(
    principal: Principal,
    batchId: string,
    offset: number,
  ): Promise<{ results: ChatBatchResultView[]; nextOffset: number }>;
}

/** A file a team uploaded through the OpenAI Files API. */
export interface StoredFileView {
  id: string;
  filename: string;
  purpose: string;
  bytes: number;
  createdAt: Date;
  expiresAt: Date | null;
}

/** The dataset service's files; another team's file is NotFound FILE_NOT_FOUND. */
export interface FilesPort {
  upload(
    principal: Principal,
    file: { filename: string; purpose: string; content: Uint8Array; expiresAfterSeconds?: number },
  ): Promise<StoredFileView>;
  get(principal: Principal, fileId: string): Promise<StoredFileView>;
  list(
    principal: Principal,
    page: { purpose?: string | undefined; limit: number; afterId?: string | undefined; ascending: boolean },
  ): Promise<{ files: StoredFileView[]; hasMore: boolean }>;
  content(principal: Principal, fileId: string): Promise<{ file: StoredFileView; content: Uint8Array }>;
  delete(principal: Principal, fileId: string): Promise<string>;
}
