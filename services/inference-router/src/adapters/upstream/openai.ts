/**
 * The OpenAI chat-completions dialect: a Chat call as a streamed
 * `POST /v1/chat/completions` body, and its chunks as upstream events. Usage:
 * `prompt_tokens` includes the cached tokens, so input = prompt − cached;
 * OpenAI-style caches bill writes as plain input, so cache writes are 0.
 * Cache markers are not sent: these providers cache automatically.
 */
import type { UpstreamCall, UpstreamEvent } from '../../application/ports';
import {
  type ChatFinishReason,
  textOf,
  type TokenLogprob,
  type ToolCallDelta,
  type ToolChoice,
} from '../../domain/chat';
import { sampling } from './sampling';

interface OpenAIMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** The request body; the stream always asks for usage on its last chunk. */
export function openaiBody(call: UpstreamCall): Record<string, unknown> {
  const { options, model } = call;
  const messages: OpenAIMessage[] = [
    ...(call.system.length ? [{ role: 'system' as const, content: textOf(call.system) }] : []),
    ...call.messages.map((m): OpenAIMessage => {
      const content = textOf(m.content);
      if (m.role === 'tool') return { role: 'tool', content, tool_call_id: m.toolCallId };
      if (m.role === 'assistant' && m.toolCalls.length)
        return {
          role: 'assistant',
          content: content || null,
          tool_calls: m.toolCalls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        };
      return { role: m.role, content };
    }),
  ];
  // GPT-5-style models refuse max_tokens; OpenAI-compatible servers (vLLM and others) take it.
  const maxTokensField = model.family === 'gpt-5' ? 'max_completion_tokens' : 'max_tokens';
  return {
    model: model.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    ...(options.maxTokens > 0 ? { [maxTokensField]: options.maxTokens } : {}),
    ...sampling(options),
    ...(options.stop.length ? { stop: options.stop } : {}),
    ...(options.seed ? { seed: options.seed } : {}),
    ...(options.frequencyPenalty ? { frequency_penalty: options.frequencyPenalty } : {}),
    ...(options.presencePenalty ? { presence_penalty: options.presencePenalty } : {}),
    ...(options.logitBias ? { logit_bias: options.logitBias } : {}),
    ...(call.responseFormat ? { response_format: call.responseFormat } : {}),
    ...(options.logprobs === undefined
      ? {}
      : { logprobs: true, ...(options.logprobs > 0 ? { top_logprobs: options.logprobs } : {}) }),
    ...(call.tools.length
      ? {
          tools: call.tools.map((t) => ({
            type: 'function',
            function: {
              name: t.name,
              ...(t.description ? { description: t.description } : {}),
              parameters: t.parameters ?? { type: 'object', properties: {} },
            },
          })),
          ...openaiToolChoice(call.toolChoice),
        }
      : {}),
  };
}

/** The tool choice as OpenAI's `tool_choice` and `parallel_tool_calls` (nothing for a free choice). */
function openaiToolChoice(choice: ToolChoice | undefined): Record<string, unknown> {
  if (!choice) return {};
  const parallel = choice.parallelToolCalls === undefined ? {} : { parallel_tool_calls: choice.parallelToolCalls };
  if (choice.mode === 'required') return { tool_choice: 'required', ...parallel };
  if (choice.mode === 'tool')
    return { tool_choice: { type: 'function', function: { name: choice.name } }, ...parallel };
  return parallel;
}

interface UpstreamTop {
  token: string;
  logprob: number;
  bytes?: number[] | null;
}

interface UpstreamLogprob extends UpstreamTop {
  top_logprobs?: UpstreamTop[] | null;
}

const utf8 = new TextEncoder();

const topOf = (t: UpstreamTop) => ({
  token: t.token,
  bytes: t.bytes ? Uint8Array.from(t.bytes) : utf8.encode(t.token),
  logprob: t.logprob,
});

/** A chunk's token log probabilities as the chat core's. */
const logprobsOf = (content: UpstreamLogprob[]): TokenLogprob[] =>
  content.map((t) => ({ ...topOf(t), topLogprobs: (t.top_logprobs ?? []).map(topOf) }));

interface Chunk {
  choices?: {
    delta?: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
    logprobs?: { content?: UpstreamLogprob[] | null } | null;
  }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
    completion_tokens_details?: { reasoning_tokens?: number } | null;
  } | null;
  error?: { message?: string; type?: string };
}

const FINISH: Record<string, ChatFinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

/** One chunk's events; an error chunk is returned as `error` for the adapter to throw. */
export function openaiEvents(data: string): { events: UpstreamEvent[]; error?: { type: string; message: string } } {
  if (data === '[DONE]') return { events: [] };
  const chunk = JSON.parse(data) as Chunk;
  if (chunk.error) return { events: [], error: { type: chunk.error.type ?? '', message: chunk.error.message ?? '' } };
  const events: UpstreamEvent[] = [];
  const choice = chunk.choices?.[0];
  const delta = choice?.delta;
  if (delta) {
    const reasoning = delta.reasoning_content ?? delta.reasoning ?? '';
    const toolCalls: ToolCallDelta[] = (delta.tool_calls ?? []).map((c) => ({
      index: c.index,
      ...(c.id ? { id: c.id } : {}),
      ...(c.function?.name ? { name: c.function.name } : {}),
      ...(c.function?.arguments ? { arguments: c.function.arguments } : {}),
    }));
    const logprobs = logprobsOf(choice?.logprobs?.content ?? []);
    if (delta.content || reasoning || toolCalls.length || logprobs.length)
      events.push({
        delta: {
          ...(delta.content ? { text: delta.content } : {}),
          ...(reasoning ? { reasoning } : {}),
          ...(toolCalls.length ? { toolCalls } : {}),
          ...(logprobs.length ? { logprobs } : {}),
        },
      });
  }
  if (choice?.finish_reason) events.push({ finish: FINISH[choice.finish_reason] ?? 'stop' });
  if (chunk.usage) {
    const prompt = chunk.usage.prompt_tokens ?? 0;
    const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
    events.push({
      usage: {
        inputTokens: Math.max(0, prompt - cached),
        cacheReadTokens: cached,
        cacheWriteTokens: 0,
        outputTokens: chunk.usage.completion_tokens ?? 0,
        reasoningTokens: chunk.usage.completion_tokens_details?.reasoning_tokens ?? 0,
      },
    });
  }
  return { events };
}
