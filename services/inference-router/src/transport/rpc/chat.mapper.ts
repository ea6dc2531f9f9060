import { Reasons, errors } from '@whetstone/errors';
import {
  type CacheControl,
  type ChatRequest as PbChatRequest,
  type ContentBlock as PbContentBlock,
  type ToolChoice as PbToolChoice,
  ToolChoiceMode,
} from '@whetstone/proto/inference/v1';
import type { ChatCall } from '../../application/chat';
import type { ChatPiece, ContentBlock, ToolCall, ToolChoice, ToolDefinition } from '../../domain/chat';
import type { Caller } from '../../domain/model';
import { chatMessageRoleOf, chatSurfaceOf, finishReasonToPb } from '../../adapters/proto-kinds';
import { generateOptionsOf, jsonObjectOf } from './router.mapper';

/** Chat ⇄ the chat core's shapes; JSON fields are parsed here so the core sees typed values. */

const utf8 = new TextDecoder();
const encoder = new TextEncoder();

const markerOf = (c: CacheControl | undefined) => (c ? { cache: { ttlSeconds: c.ttlSeconds } } : {});

const blocksOf = (blocks: PbContentBlock[]): ContentBlock[] =>
  blocks.map((b) => ({ text: b.text, ...markerOf(b.cacheControl) }));

/** A JSON array field, or InvalidArgument naming it. */
function jsonList<T>(bytes: Uint8Array, field: string): T[] {
  if (!bytes.length) return [];
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes));
    if (Array.isArray(value)) return value as T[];
  } catch {
    // Reported below.
  }
  throw errors.invalid(Reasons.VALIDATION_FAILED, `Invalid ${field}: it must be a JSON array.`, [
    { field, message: 'must be a JSON array' },
  ]);
}

const responseFormatOf = (bytes: Uint8Array) => {
  const format = jsonObjectOf(bytes, 'response_format');
  return format ? { responseFormat: format } : {};
};

const MODES: Record<ToolChoiceMode, ToolChoice['mode']> = {
  [ToolChoiceMode.UNSPECIFIED]: 'auto',
  [ToolChoiceMode.REQUIRED]: 'required',
  [ToolChoiceMode.TOOL]: 'tool',
};

/** The request's tool choice; nothing when it leaves the choice to the model and says nothing of parallel calls. */
function toolChoiceOf(choice: PbToolChoice | undefined): { toolChoice?: ToolChoice } {
  if (!choice) return {};
  const mode = MODES[choice.mode] ?? 'auto';
  if (mode === 'auto' && choice.parallelToolCalls === undefined) return {};
  return {
    toolChoice: {
      mode,
      ...(mode === 'tool' ? { name: choice.name } : {}),
      ...(choice.parallelToolCalls === undefined ? {} : { parallelToolCalls: choice.parallelToolCalls }),
    },
  };
}

function toolCallsOf(bytes: Uint8Array): ToolCall[] {
  return jsonList<Partial<ToolCall>>(bytes, 'tool_calls').map((c) => ({
    id: String(c.id ?? ''),
    name: String(c.name ?? ''),
    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
  }));
}

export function chatCallOf(caller: Caller, req: PbChatRequest, signal: AbortSignal, responseId: string): ChatCall {
  return {
    caller,
    responseId,
    request: {
      model: req.model,
      system: blocksOf(req.system),
      messages: req.messages.map((m) => ({
        role: chatMessageRoleOf(m.role),
        content: blocksOf(m.content),
        toolCalls: toolCallsOf(m.toolCallsJson),
        toolCallId: m.toolCallId,
      })),
      options: generateOptionsOf(req.sampling, signal),
      tools: jsonList<ToolDefinition>(req.toolsJson, 'tools'),
      ...(req.toolsCacheControl ? { toolsCache: { ttlSeconds: req.toolsCacheControl.ttlSeconds } } : {}),
      schemaJson: req.schemaJson,
      schema: jsonObjectOf(req.schemaJson, 'schema'),
      ...responseFormatOf(req.responseFormatJson),
      ...toolChoiceOf(req.toolChoice),
      surface: chatSurfaceOf(req.surface),
      store: req.store,
      ...(Object.keys(req.metadata).length ? { metadata: { ...req.metadata } } : {}),
      ...(req.conversationId ? { conversationId: req.conversationId } : {}),
      includeReasoning: req.includeReasoning,
    },
  };
}

/** One piece as a ChatResponse; every piece carries the response id. */
export function chatPieceToPb(piece: ChatPiece, responseId: string) {
  if ('delta' in piece) {
    const d = piece.delta;
    return {
      text: d.text ?? '',
      reasoning: d.reasoning ?? '',
      toolCallsJson: d.toolCalls?.length ? encoder.encode(JSON.stringify(d.toolCalls)) : new Uint8Array(),
      responseId,
      logprobs: d.logprobs ?? [],
      promptLogprobs: d.promptLogprobs ?? [],
    };
  }
  const d = piece.done;
  return {
    finishReason: finishReasonToPb(d.finishReason),
    inferenceId: d.inferenceId,
    model: d.model,
    usage: {
      inputTokens: BigInt(d.usage.inputTokens),
      cacheReadTokens: BigInt(d.usage.cacheReadTokens),
      cacheWriteTokens: BigInt(d.usage.cacheWriteTokens),
      outputTokens: BigInt(d.usage.outputTokens),
      reasoningTokens: BigInt(d.usage.reasoningTokens),
      costMicroCredits: d.usage.costMicroCredits,
    },
    latencyMs: d.latencyMs,
    responseId: d.responseId,
    routedModel: d.routedModel ?? '',
    stopSequence: d.stopSequence ?? '',
    ...(d.savings ? { savings: d.savings } : {}),
  };
}
