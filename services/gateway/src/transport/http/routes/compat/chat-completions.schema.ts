import { z } from 'zod';
import type { ChatBlock, ChatInput, ChatTurn } from '../../../../application/ports';
import {
  block,
  CacheControl,
  capBreakpoints,
  Choices,
  LogitBias,
  logitBiasField,
  MaxTokens,
  ModelId,
  Penalty,
  penaltiesOf,
  SAMPLING_DEFAULTS,
  ResponseFormat,
  responseFormatField,
  SchemaExtension,
  Metadata,
  Seed,
  Stop,
  stopList,
  Temperature,
  Text,
  TopLogprobs,
  TopP,
  turn,
} from './blocks';
import { invalidBody } from '../../validate';
import { toolChoiceField } from './tool-choice';

/**
 * POST /v1/chat/completions: the request as OpenAI's clients send it, plus the spec's extensions. An optional
 * field may also be null, as OpenAI takes it (clients that echo a reply's message back send `tool_calls: null`).
 */

const TextPart = z.object({ type: z.literal('text'), text: Text, cache_control: CacheControl.nullish() });
const Content = z.union([Text, z.array(TextPart).max(1000)], {
  error:
    'must be a string or a list of text parts ({"type": "text", "text": …}); image, audio and file parts are not taken',
});
const Name = z.string().max(200).nullish();
const ToolCall = z.object({
  id: z.string().min(1).max(200),
  type: z.literal('function').nullish(),
  function: z.object({ name: z.string().min(1).max(200), arguments: z.string().max(1_000_000) }),
});

const Message = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: Content, name: Name }),
  z.object({ role: z.literal('user'), content: Content, name: Name }),
  z.object({
    role: z.literal('assistant'),
    content: Content.nullish(),
    name: Name,
    tool_calls: z.array(ToolCall).max(128).nullish(),
  }),
  z.object({ role: z.literal('tool'), content: Content, tool_call_id: z.string().min(1).max(200) }),
]);

const Tool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1).max(200),
    description: z.string().max(100_000).nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});

/** The reasoning visibility controls: `exclude: false` or `display: "summarized"` opt in to reasoning text. */
export const ReasoningControls = z.object({
  exclude: z.boolean().optional(),
  display: z.string().max(50).optional(),
  effort: z.string().max(50).optional(),
  summary: z.string().max(50).nullish(),
});
export const optsInToReasoning = (r: z.infer<typeof ReasoningControls> | undefined | null) =>
  r?.exclude === false || r?.display === 'summarized' || (r?.summary != null && r.summary !== 'none');

export const ChatCompletionsBody = z.object({
  model: ModelId,
  messages: z.array(Message).min(1, 'must hold at least 1 message').max(10_000),
  max_tokens: MaxTokens.nullish(),
  max_completion_tokens: MaxTokens.nullish(),
  temperature: Temperature.nullish(),
  top_p: TopP.nullish(),
  stop: Stop.nullish(),
  seed: Seed.nullish(),
  frequency_penalty: Penalty.nullish(),
  presence_penalty: Penalty.nullish(),
  logit_bias: LogitBias.nullish(),
  n: Choices.nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: TopLogprobs.nullish(),
  tools: z.array(Tool).max(128).nullish(),
  tool_choice: z
    .union(
      [
        z.enum(['none', 'auto', 'required']),
        z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
      ],
      { error: 'must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}' },
    )
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  schema: SchemaExtension.nullish(),
  response_format: ResponseFormat.nullish(),
  store: z.boolean().nullish(),
  metadata: Metadata.nullish(),
  reasoning: ReasoningControls.nullish(),
});
export type ChatCompletionsBody = z.infer<typeof ChatCompletionsBody>;

type Msg = ChatCompletionsBody['messages'][number];

/** Blocks of a message; markers count only on system and user content (spec, Inference). */
function blocksOf(content: z.infer<typeof Content> | null | undefined, markers: boolean): ChatBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.map((p) => block(p.text, p.cache_control ?? undefined, markers));
}

function turnOf(m: Msg): ChatTurn {
  switch (m.role) {
    case 'system':
    case 'developer':
      return turn('system', blocksOf(m.content, true));
    case 'user':
      return turn('user', blocksOf(m.content, true));
    case 'assistant':
      return turn('assistant', blocksOf(m.content, false), {
        toolCalls: (m.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments: c.function.arguments,
        })),
      });
    case 'tool':
      return turn('tool', blocksOf(m.content, false), { toolCallId: m.tool_call_id });
  }
}

/** Leading system and developer messages become the system prompt; later ones stay turns. */
export function chatInputOf(body: ChatCompletionsBody): ChatInput {
  const turns = body.messages.map(turnOf);
  const lead = turns.findIndex((t) => t.role !== 'system');
  if (lead < 0) throw invalidBody('messages', 'must hold at least one user, assistant or tool message');
  const noTools = body.tool_choice === 'none';
  const tools = noTools
    ? []
    : (body.tools ?? []).map((t) => ({
        name: t.function.name,
        description: t.function.description ?? '',
        parameters: t.function.parameters ?? { type: 'object', properties: {} },
      }));
  const choice = body.tool_choice;
  return capBreakpoints({
    model: body.model,
    system: turns.slice(0, lead).flatMap((t) => t.content),
    messages: turns.slice(lead),
    temperature: body.temperature ?? SAMPLING_DEFAULTS.temperature,
    topP: body.top_p ?? SAMPLING_DEFAULTS.topP,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? SAMPLING_DEFAULTS.maxTokens,
    stop: stopList(body.stop),
    seed: body.seed ?? SAMPLING_DEFAULTS.seed,
    ...penaltiesOf(body),
    ...logitBiasField(body.logit_bias),
    tools,
    ...(noTools
      ? {}
      : toolChoiceField(
          typeof choice === 'object' && choice
            ? { mode: 'tool', name: choice.function.name }
            : { mode: choice === 'required' ? 'required' : 'auto' },
          body.parallel_tool_calls,
          tools,
        )),
    ...(body.schema ? { schema: body.schema } : {}),
    ...responseFormatField(body.response_format),
    surface: 'chat_completions',
    store: body.store ?? false,
    ...(body.metadata ? { metadata: body.metadata } : {}),
    includeReasoning: optsInToReasoning(body.reasoning),
    ...logprobsField(body.logprobs, body.top_logprobs),
  });
}

/**
 * OpenAI's `logprobs` and `top_logprobs` as the chat core's one option: set (to the number of alternatives) only
 * when `logprobs` is true; alternatives without it are refused, as OpenAI refuses them.
 */
export function logprobsField(logprobs: boolean | null | undefined, top: number | null | undefined) {
  if (!logprobs) {
    if (top) throw invalidBody('top_logprobs', 'needs logprobs: true');
    return {};
  }
  return { logprobs: top ?? 0 };
}
