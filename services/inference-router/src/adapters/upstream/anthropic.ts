/**
 * The Anthropic Messages dialect: a Chat call as a streamed `POST /v1/messages`
 * body (system blocks, cache_control markers kept where the caller put them,
 * tool definitions and results, a max_tokens default since the API requires
 * one), and its event stream as upstream events. Usage: `input_tokens`
 * excludes the cache read and created, which arrive as their own counts.
 */
import { Reasons, errors } from '@whetstone/errors';
import type { UpstreamCall, UpstreamEvent } from '../../application/ports';
import type { CacheMarker, ChatFinishReason, ChatMessage, ContentBlock, ToolChoice } from '../../domain/chat';
import { sampling } from './sampling';

/** The API version the adapter speaks (sent as anthropic-version). */
export const ANTHROPIC_VERSION = '2023-06-01';

type Block = Record<string, unknown>;

/** Anthropic caches for 5 minutes by default, or 1 hour when asked. */
const cacheControl = (marker: CacheMarker | undefined) =>
  marker ? { cache_control: { type: 'ephemeral', ...(marker.ttlSeconds >= 3600 ? { ttl: '1h' } : {}) } } : {};

const textBlocks = (blocks: ContentBlock[]): Block[] =>
  blocks.filter((b) => b.text || b.cache).map((b) => ({ type: 'text', text: b.text, ...cacheControl(b.cache) }));

function parseArguments(json: string): unknown {
  try {
    return JSON.parse(json || '{}');
  } catch {
    return {};
  }
}

/** One turn's blocks: tool results for a tool turn, text then tool_use blocks for an assistant's calls. */
function turnBlocks(m: ChatMessage): Block[] {
  if (m.role === 'tool')
    return [{ type: 'tool_result', tool_use_id: m.toolCallId, content: textBlocks(m.content), ...lastMarker(m) }];
  const calls = m.toolCalls.map((c) => ({
    type: 'tool_use',
    id: c.id,
    name: c.name,
    input: parseArguments(c.arguments),
  }));
  return [...textBlocks(m.content), ...calls];
}

/** A tool result carries the marker of its last block (the API puts cache_control on the tool_result itself). */
const lastMarker = (m: ChatMessage) => cacheControl([...m.content].reverse().find((b) => b.cache)?.cache);

/** Turns in the Messages API's alternation: tool turns are user turns, consecutive same-role turns merge. */
function messagesOf(call: UpstreamCall): { role: 'user' | 'assistant'; content: Block[] }[] {
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  for (const m of call.messages) {
    if (m.role === 'system') continue;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks = turnBlocks(m);
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

/** The request body; system turns inside the conversation join the system blocks. */
export function anthropicBody(call: UpstreamCall): Record<string, unknown> {
  const { options, model } = call;
  if (call.responseFormat)
    throw errors.invalid(
      Reasons.VALIDATION_FAILED,
      `Model '${call.modelId}' is served through the Messages API, which has no response_format; leave it out (or use type "text").`,
      [{ field: 'response_format', message: 'is not supported by this model' }],
    );
  const system = [...call.system, ...call.messages.filter((m) => m.role === 'system').flatMap((m) => m.content)];
  const tools = call.tools.map((t, i) => ({
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    input_schema: t.parameters ?? { type: 'object', properties: {} },
    ...(i === call.tools.length - 1 ? cacheControl(call.toolsCache) : {}),
  }));
  return {
    model: model.model,
    max_tokens: options.maxTokens > 0 ? options.maxTokens : model.defaultMaxTokens,
    stream: true,
    ...(system.length ? { system: textBlocks(system) } : {}),
    messages: messagesOf(call),
    ...sampling(options, 1),
    ...(options.topK ? { top_k: options.topK } : {}),
    ...(options.stop.length ? { stop_sequences: options.stop } : {}),
    ...(tools.length ? { tools, ...anthropicToolChoice(call.toolChoice) } : {}),
  };
}

/** The tool choice as Anthropic's `tool_choice` (`any`, `tool`, or `auto` carrying only the parallel setting). */
function anthropicToolChoice(choice: ToolChoice | undefined): Record<string, unknown> {
  if (!choice) return {};
  const parallel =
    choice.parallelToolCalls === undefined ? {} : { disable_parallel_tool_use: !choice.parallelToolCalls };
  const type = choice.mode === 'required' ? 'any' : choice.mode;
  return { tool_choice: { type, ...(choice.mode === 'tool' ? { name: choice.name } : {}), ...parallel } };
}

const STOP: Record<string, ChatFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Input classes as reported (message_start carries them; a later message_delta may repeat them). */
function inputUsage(
  u: AnthropicUsage,
): Partial<Record<'inputTokens' | 'cacheReadTokens' | 'cacheWriteTokens', number>> {
  return {
    ...(u.input_tokens === undefined ? {} : { inputTokens: u.input_tokens }),
    ...(u.cache_read_input_tokens == null ? {} : { cacheReadTokens: u.cache_read_input_tokens }),
    ...(u.cache_creation_input_tokens == null ? {} : { cacheWriteTokens: u.cache_creation_input_tokens }),
  };
}

interface StreamEvent {
  type: string;
  index?: number;
  message?: { usage?: AnthropicUsage };
  content_block?: { type: string; id?: string; name?: string };
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    thinking?: string;
    stop_reason?: string | null;
    stop_sequence?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/**
 * A parser for one stream: it numbers tool_use blocks as tool calls (0, 1, …)
 * whatever their content-block index. An `error` event is returned for the adapter to throw.
 */
export function anthropicParser() {
  const toolIndex = new Map<number, number>();
  return (data: string): { events: UpstreamEvent[]; error?: { type: string; message: string } } => {
    const e = JSON.parse(data) as StreamEvent;
    const index = e.index ?? 0;
    switch (e.type) {
      case 'message_start':
        return { events: e.message?.usage ? [{ usage: inputUsage(e.message.usage) }] : [] };
      case 'content_block_start': {
        if (e.content_block?.type !== 'tool_use') return { events: [] };
        toolIndex.set(index, toolIndex.size);
        const call = { index: toolIndex.get(index)!, id: e.content_block.id ?? '', name: e.content_block.name ?? '' };
        return { events: [{ delta: { toolCalls: [call] } }] };
      }
      case 'content_block_delta': {
        const d = e.delta ?? {};
        if (d.type === 'text_delta' && d.text) return { events: [{ delta: { text: d.text } }] };
        if (d.type === 'thinking_delta' && d.thinking) return { events: [{ delta: { reasoning: d.thinking } }] };
        if (d.type === 'input_json_delta' && d.partial_json && toolIndex.has(index))
          return { events: [{ delta: { toolCalls: [{ index: toolIndex.get(index)!, arguments: d.partial_json }] } }] };
        return { events: [] };
      }
      case 'message_delta': {
        const events: UpstreamEvent[] = [];
        if (e.usage)
          events.push({
            usage: {
              ...inputUsage(e.usage),
              ...(e.usage.output_tokens === undefined ? {} : { outputTokens: e.usage.output_tokens }),
            },
          });
        if (e.delta?.stop_reason)
          events.push({
            finish: STOP[e.delta.stop_reason] ?? 'stop',
            ...(e.delta.stop_sequence ? { stopSequence: e.delta.stop_sequence } : {}),
          });
        return { events };
      }
      case 'error':
        return { events: [], error: { type: e.error?.type ?? '', message: e.error?.message ?? '' } };
      default:
        return { events: [] };
    }
  };
}
