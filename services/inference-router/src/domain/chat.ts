/**
 * The chat core's words: a conversation with its content blocks and cache
 * markers kept, tools, the pieces of a streamed reply, and the four token
 * classes a reply is priced by. Plain types and pure rules; no I/O.
 */
import type { GenerateOptions } from './model';
import type { Savings } from './routing';

/** A prompt-cache marker: the cacheable prefix ends after the block (or tool list) that carries it. */
export interface CacheMarker {
  /** Seconds the entry lives after its last use; 0 means the default (300). */
  ttlSeconds: number;
}

export interface ContentBlock {
  text: string;
  cache?: CacheMarker;
}

export type ChatMessageRole = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call an assistant turn made (arguments are a JSON string). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatMessage {
  role: ChatMessageRole;
  content: ContentBlock[];
  /** An assistant turn's tool calls; empty when none. */
  toolCalls: ToolCall[];
  /** A tool turn: the id of the call it answers; empty otherwise. */
  toolCallId: string;
}

/** A tool the model may call; `parameters` is a JSON schema. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: unknown;
}

/** One tool-call delta of a streamed reply: id and name on a call's first delta, argument text appended. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

/** The public surface a chat call came through; history records it. */
export type ChatSurface = 'chat_completions' | 'messages' | 'completions' | 'responses';

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** Tokens of one call by the classes it is priced by; the three input classes are disjoint. */
export interface TokenUsage {
  /** Input tokens neither read from nor written to a prompt cache. */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Output tokens, reasoning included. */
  outputTokens: number;
  /** Of outputTokens, those spent on reasoning. */
  reasoningTokens: number;
}

export interface ChatUsage extends TokenUsage {
  costMicroCredits: bigint;
}

export const NO_TOKENS: TokenUsage = {
  inputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
};

/** Every input token, whatever its cache class. */
export const totalInput = (u: TokenUsage): number => u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;

/** A conversation for one model, as the gateway validated and translated it. */
/**
 * What a call asks of the model's tool use: `auto` (it chooses), `required` (some tool), `tool` (the one `name`
 * names); `parallelToolCalls` false asks for at most one call per turn, unset leaves the provider's default.
 */
export interface ToolChoice {
  mode: 'auto' | 'required' | 'tool';
  name?: string;
  parallelToolCalls?: boolean;
}

export interface ChatRequest {
  /** A base model id, a training job id, a project id or an upstream model id. */
  model: string;
  system: ContentBlock[];
  /** Oldest first; never empty. */
  messages: ChatMessage[];
  options: GenerateOptions;
  tools: ToolDefinition[];
  /** Set when the cacheable prefix ends after the tool definitions. */
  toolsCache?: CacheMarker;
  /** Extraction models: the schema as JSON bytes (required for them); empty otherwise. */
  schemaJson: Uint8Array;
  /** The same schema parsed, for the record. */
  schema: Record<string, unknown> | undefined;
  /** JSON output asked for, as OpenAI's `response_format` (never `text`); only some servers can honour it. */
  responseFormat?: Record<string, unknown>;
  /** Whether and which tool the model must call; unset lets it choose. */
  toolChoice?: ToolChoice;
  /** Unset for GenerateText, whose surface follows from its project (native or project). */
  surface?: ChatSurface;
  /** Whether the inference is stored in history (`store: true`). */
  store: boolean;
  /** OpenAI's `metadata`, kept with a stored call; unset or empty: none. */
  metadata?: Record<string, string>;
  /** UUID of the OpenAI conversation a Responses call belongs to, kept with a stored call; unset: none. */
  conversationId?: string;
  /** Whether reasoning text is passed on (the caller opted in). */
  includeReasoning: boolean;
}

/** One of the most likely tokens at a place of the reply; `token` is its text (`bytes:\\xNN` when not whole UTF-8). */
export interface TopLogprob {
  token: string;
  bytes: Uint8Array;
  /** Natural log of its probability under the model. */
  logprob: number;
}

/** A token of the reply with its log probability and the most likely tokens at its place (most likely first). */
export interface TokenLogprob extends TopLogprob {
  topLogprobs: TopLogprob[];
}

/** A piece of a streamed reply: text, reasoning or tool-call deltas, and the text's token log probabilities. */
export interface ChatDelta {
  text?: string;
  reasoning?: string;
  toolCalls?: ToolCallDelta[];
  /** Asked for with options.logprobs: the tokens of `text`, in order. */
  logprobs?: TokenLogprob[];
  /** Asked for with options.promptLogprobs: the prompt's tokens (a built-in decoder's last turn), before any text. */
  promptLogprobs?: TokenLogprob[];
}

/** What the last piece of a reply carries. */
export interface ChatDone {
  /** The usage idempotency key; the same id the inference is stored under when it is stored. */
  responseId: string;
  /** Empty unless the inference was stored. */
  inferenceId: string;
  model: string;
  finishReason: ChatFinishReason;
  /** The stop sequence that ended the reply, when the server said which. */
  stopSequence?: string;
  usage: ChatUsage;
  latencyMs: number;
  text: string;
  /** A router project's pick, when it is not the reference model. */
  routedModel?: string;
  /** Set with routedModel when the pick's rates are below the reference's. */
  savings?: Savings;
}

export type ChatPiece = { delta: ChatDelta } | { done: ChatDone };

/** The text of a turn: its blocks joined. */
export const textOf = (blocks: ContentBlock[]): string => blocks.map((b) => b.text).join('');

/**
 * Every prompt character: the tool definitions (as JSON: providers count them as input), system blocks, turns
 * and the arguments of earlier tool calls.
 */
export const promptText = (r: ChatRequest): string =>
  (r.tools.length ? JSON.stringify(r.tools) : '') +
  textOf(r.system) +
  r.messages.map((m) => textOf(m.content) + m.toolCalls.map((c) => c.arguments).join('')).join('');

/** Rough tokens of text for credit checks, cut streams and routing rules: 4 characters per token. */
export const approxTokens = (text: string): number => Math.ceil(text.length / 4);

/**
 * Folds tool-call deltas into whole calls, by index: the first delta of a
 * call names it, later ones append argument text.
 */
export function foldToolCalls(calls: ToolCall[], deltas: ToolCallDelta[]): void {
  for (const d of deltas) {
    const call = (calls[d.index] ??= { id: '', name: '', arguments: '' });
    if (d.id) call.id = d.id;
    if (d.name) call.name = d.name;
    if (d.arguments) call.arguments += d.arguments;
  }
}

/** Cache breakpoints honoured per request (spec, "Other constants": further markers are ignored). */
export const MAX_CACHE_MARKERS = 4;

/**
 * The request with only its first four cache markers, in prompt order (tool
 * definitions, system blocks, then turns); later markers are dropped, as the
 * spec says, so no provider sees more than it accepts.
 */
export function limitCacheMarkers(request: ChatRequest): ChatRequest {
  let left = MAX_CACHE_MARKERS;
  const keep = (marker: CacheMarker | undefined) => (marker && left > 0 ? (left--, marker) : undefined);
  const blocks = (list: ContentBlock[]) =>
    list.map((b) => {
      const cache = keep(b.cache);
      return cache ? { text: b.text, cache } : { text: b.text };
    });
  const toolsCache = keep(request.toolsCache);
  const { toolsCache: _dropped, ...rest } = request;
  return {
    ...rest,
    ...(toolsCache ? { toolsCache } : {}),
    system: blocks(request.system),
    messages: request.messages.map((m) => ({ ...m, content: blocks(m.content) })),
  };
}
