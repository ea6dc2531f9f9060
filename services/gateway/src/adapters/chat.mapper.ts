import { create } from '@bufbuild/protobuf';
import { microToCredits } from '@whetstone/catalog';
import {
  ChatRequestSchema,
  ChatRole,
  FinishReason,
  InferenceSurface,
  ToolChoiceMode,
  type ChatRequest,
  type ChatResponse,
  type ContentBlock,
} from '@whetstone/proto/inference/v1';
import type {
  ChatBlock,
  ChatFinishReason,
  ChatInput,
  ChatPiece,
  ChatTokenLogprob,
  ChatToolChoice,
  ChatToolCallDelta,
  ChatTurn,
  Principal,
} from '../application/ports';
import { callerOf } from './caller';

/** The Chat contract's messages ⇄ the gateway's plain chat shapes. */

const ROLE: Record<ChatTurn['role'], ChatRole> = {
  system: ChatRole.SYSTEM,
  user: ChatRole.USER,
  assistant: ChatRole.ASSISTANT,
  tool: ChatRole.TOOL,
};
const SURFACE: Record<ChatInput['surface'], InferenceSurface> = {
  chat_completions: InferenceSurface.CHAT_COMPLETIONS,
  completions: InferenceSurface.COMPLETIONS,
  responses: InferenceSurface.RESPONSES,
  messages: InferenceSurface.MESSAGES,
};
const FINISH: Record<FinishReason, ChatFinishReason> = {
  // A stream that ended without saying why ran out of tokens.
  [FinishReason.UNSPECIFIED]: 'length',
  [FinishReason.STOP]: 'stop',
  [FinishReason.LENGTH]: 'length',
  [FinishReason.TOOL_CALLS]: 'tool_calls',
  [FinishReason.CONTENT_FILTER]: 'content_filter',
};

const NO_BYTES = new Uint8Array(0);
const utf8 = new TextDecoder();
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

const blockToPb = (b: ChatBlock): Pick<ContentBlock, 'text'> & { cacheControl?: { ttlSeconds: number } } =>
  b.cacheTtlSeconds === undefined
    ? { text: b.text }
    : { text: b.text, cacheControl: { ttlSeconds: b.cacheTtlSeconds } };

export function chatRequestToPb(principal: Principal, input: ChatInput): ChatRequest {
  return create(ChatRequestSchema, {
    caller: callerOf(principal),
    model: input.model,
    system: input.system.map(blockToPb),
    messages: input.messages.map((m) => ({
      role: ROLE[m.role],
      content: m.content.map(blockToPb),
      toolCallsJson: m.toolCalls.length ? json(m.toolCalls) : NO_BYTES,
      toolCallId: m.toolCallId,
    })),
    sampling: {
      temperature: input.temperature,
      topP: input.topP,
      maxTokens: input.maxTokens,
      stop: input.stop,
      seed: BigInt(input.seed),
      frequencyPenalty: input.frequencyPenalty ?? 0,
      presencePenalty: input.presencePenalty ?? 0,
      topK: input.topK ?? 0,
      logitBias: input.logitBias ?? {},
      ...(input.logprobs === undefined ? {} : { logprobs: input.logprobs }),
      promptLogprobs: input.promptLogprobs ?? false,
      promptOnly: input.promptOnly ?? false,
    },
    toolsJson: input.tools.length ? json(input.tools) : NO_BYTES,
    ...(input.toolsCacheTtlSeconds === undefined
      ? {}
      : { toolsCacheControl: { ttlSeconds: input.toolsCacheTtlSeconds } }),
    schemaJson: input.schema ? json(input.schema) : NO_BYTES,
    responseFormatJson: input.responseFormat ? json(input.responseFormat) : NO_BYTES,
    ...(input.toolChoice ? { toolChoice: toolChoiceToPb(input.toolChoice) } : {}),
    surface: SURFACE[input.surface],
    store: input.store,
    metadata: input.metadata ?? {},
    conversationId: input.conversationId ?? '',
    includeReasoning: input.includeReasoning,
  });
}

const topOf = (t: { token: string; logprob: number; bytes: Uint8Array }) => ({
  token: t.token,
  logprob: t.logprob,
  bytes: Array.from(t.bytes),
});

const TOOL_CHOICE_MODE: Record<ChatToolChoice['mode'], ToolChoiceMode> = {
  auto: ToolChoiceMode.UNSPECIFIED,
  required: ToolChoiceMode.REQUIRED,
  tool: ToolChoiceMode.TOOL,
};

const toolChoiceToPb = (choice: ChatToolChoice) => ({
  mode: TOOL_CHOICE_MODE[choice.mode],
  name: choice.name ?? '',
  ...(choice.parallelToolCalls === undefined ? {} : { parallelToolCalls: choice.parallelToolCalls }),
});

const tokenOf = (t: ChatResponse['logprobs'][number]): ChatTokenLogprob => ({
  ...topOf(t),
  top_logprobs: t.topLogprobs.map(topOf),
});

function toolCallDeltas(bytes: Uint8Array): ChatToolCallDelta[] {
  if (bytes.length === 0) return [];
  return JSON.parse(utf8.decode(bytes)) as ChatToolCallDelta[];
}

export function chatPieceOf(piece: ChatResponse): ChatPiece {
  const out: ChatPiece = {
    responseId: piece.responseId,
    text: piece.text,
    reasoning: piece.reasoning,
    toolCalls: toolCallDeltas(piece.toolCallsJson),
    logprobs: piece.logprobs.map(tokenOf),
    ...(piece.promptLogprobs.length ? { promptLogprobs: piece.promptLogprobs.map(tokenOf) } : {}),
  };
  if (piece.finishReason === FinishReason.UNSPECIFIED) return out;
  const u = piece.usage;
  out.done = {
    finishReason: FINISH[piece.finishReason],
    stopSequence: piece.stopSequence || null,
    model: piece.model,
    usage: {
      input_tokens: Number(u?.inputTokens ?? 0n),
      cache_read_tokens: Number(u?.cacheReadTokens ?? 0n),
      cache_write_tokens: Number(u?.cacheWriteTokens ?? 0n),
      output_tokens: Number(u?.outputTokens ?? 0n),
      reasoning_tokens: Number(u?.reasoningTokens ?? 0n),
      cost_credits: microToCredits(u?.costMicroCredits ?? 0n),
    },
    inferenceId: piece.inferenceId || null,
    routedModel: piece.routedModel || null,
    savings: piece.savings
      ? { input_per_million: piece.savings.inputPerMillion, output_per_million: piece.savings.outputPerMillion }
      : null,
    latencyMs: piece.latencyMs,
  };
  return out;
}
