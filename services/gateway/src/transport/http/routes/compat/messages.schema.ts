import { z } from 'zod';
import type { ChatBlock, ChatInput, ChatTurn } from '../../../../application/ports';
import {
  block,
  CacheControl,
  capBreakpoints,
  MaxTokens,
  ModelId,
  SAMPLING_DEFAULTS,
  SchemaExtension,
  Seed,
  stopList,
  Temperature,
  Text,
  TopP,
  ttlSeconds,
  turn,
} from './blocks';
import { invalidBody } from '../../validate';
import { toolChoiceField } from './tool-choice';

/** POST /v1/messages: Anthropic's Messages request; markers count on system, message and tools blocks. */

const TextBlock = z.object({ type: z.literal('text'), text: Text, cache_control: CacheControl.nullish() });
/** What a field of text blocks says when it is neither a string nor such a list. */
const TEXT_BLOCKS = 'must be a string or a list of text blocks ({"type": "text", "text": …})';
const ToolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  input: z.unknown(),
  cache_control: CacheControl.nullish(),
});
const ToolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(200),
  content: z.union([Text, z.array(TextBlock).max(1000)], { error: TEXT_BLOCKS }).optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl.nullish(),
});
/** Earlier thinking is accepted and not sent back to the model. */
const ThinkingBlock = z.object({
  type: z.enum(['thinking', 'redacted_thinking']),
  thinking: z.string().optional(),
  signature: z.string().optional(),
  data: z.string().optional(),
});
const Block = z.discriminatedUnion('type', [TextBlock, ToolUseBlock, ToolResultBlock, ThinkingBlock]);

const Message = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([Text, z.array(Block).max(1000)], {
    error:
      'must be a string or a list of text, tool_use (id, name, input), tool_result (tool_use_id) or thinking blocks; image and document blocks are not taken',
  }),
});

const Tool = z.object({
  name: z.string().min(1).max(200),
  description: z.string().max(100_000).optional(),
  input_schema: z.record(z.string(), z.unknown()),
  cache_control: CacheControl.nullish(),
});

/** The most `stop_sequences` a Messages call may give. */
export const MAX_STOP_SEQUENCES = 64;

export const MessagesBody = z.object({
  model: ModelId,
  max_tokens: MaxTokens,
  system: z.union([Text, z.array(TextBlock).max(1000)], { error: TEXT_BLOCKS }).optional(),
  messages: z.array(Message).min(1, 'must hold at least 1 message').max(10_000),
  temperature: Temperature.max(1).optional(),
  top_p: TopP.optional(),
  top_k: z.number().int().min(0).max(1_000_000).optional(),
  // Anthropic sets no small bound; 64 keeps the decoders' per-token stop check cheap.
  stop_sequences: z
    .array(z.string().min(1, 'must not hold an empty sequence'))
    .max(MAX_STOP_SEQUENCES, `must hold at most ${MAX_STOP_SEQUENCES} sequences`)
    .optional(),
  seed: Seed.optional(),
  stream: z.boolean().optional(),
  tools: z.array(Tool).max(128).optional(),
  tool_choice: z
    .object({
      type: z.enum(['auto', 'any', 'tool', 'none']),
      name: z.string().optional(),
      disable_parallel_tool_use: z.boolean().optional(),
    })
    .optional(),
  thinking: z
    .object({
      type: z.enum(['enabled', 'disabled', 'adaptive']),
      budget_tokens: z.number().int().min(0).optional(),
      display: z.string().max(50).optional(),
    })
    .optional(),
  /** Anthropic's `metadata`: `user_id` is kept with a stored call (as OpenAI metadata `{user_id}`); other keys are ignored. */
  metadata: z
    .object({ user_id: z.string().max(256, 'must be at most 256 characters').nullish() })
    .catchall(z.unknown())
    .nullish(),
  schema: SchemaExtension.optional(),
  store: z.boolean().optional(),
});
export type MessagesBody = z.infer<typeof MessagesBody>;

/** POST /v1/messages/count_tokens: the request Anthropic's countTokens sends, without sampling or streaming. */
export const CountTokensBody = MessagesBody.pick({
  model: true,
  system: true,
  messages: true,
  tools: true,
  tool_choice: true,
  thinking: true,
  schema: true,
});
export type CountTokensBody = z.infer<typeof CountTokensBody>;
type Msg = MessagesBody['messages'][number];

const textBlocks = (content: string | z.infer<typeof TextBlock>[] | undefined): ChatBlock[] =>
  content === undefined
    ? []
    : typeof content === 'string'
      ? [{ text: content }]
      : content.map((b) => block(b.text, b.cache_control ?? undefined, true));

/** A marker on a tool_use or tool_result block ends the prefix at that turn's last block. */
function withMarker(blocks: ChatBlock[], cc: CacheControl | null | undefined): ChatBlock[] {
  if (!cc) return blocks;
  const last = blocks.at(-1) ?? { text: '' };
  return [...blocks.slice(0, -1), { text: last.text, cacheTtlSeconds: ttlSeconds(cc) }];
}

/** One Messages turn as chat turns: tool results become tool turns, tool uses the assistant's calls. */
function turnsOf(m: Msg): ChatTurn[] {
  if (typeof m.content === 'string') return [turn(m.role, [{ text: m.content }])];
  const out: ChatTurn[] = [];
  let current = turn(m.role, []);
  for (const b of m.content) {
    if (b.type === 'text') current.content.push(block(b.text, b.cache_control ?? undefined, true));
    else if (b.type === 'tool_use') {
      current.toolCalls.push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) });
      if (b.cache_control) current.content = withMarker(current.content, b.cache_control);
    } else if (b.type === 'tool_result') {
      if (current.content.length || current.toolCalls.length) out.push(current);
      const text = textBlocks(b.content).map((t) => t.text);
      out.push(turn('tool', withMarker([{ text: text.join('') }], b.cache_control), { toolCallId: b.tool_use_id }));
      current = turn(m.role, []);
    }
  }
  if (current.content.length || current.toolCalls.length || out.length === 0) out.push(current);
  return out;
}

/** Anthropic's `tool_choice` (not `none`) as the chat core's: `any` is some tool, `tool` the one named. */
function messagesChoice(choice: MessagesBody['tool_choice'], tools: ChatInput['tools']): Pick<ChatInput, 'toolChoice'> {
  if (!choice) return {};
  const mode = choice.type === 'any' ? 'required' : choice.type === 'tool' ? 'tool' : 'auto';
  const parallel = choice.disable_parallel_tool_use === undefined ? undefined : !choice.disable_parallel_tool_use;
  return toolChoiceField({ mode, name: choice.name }, parallel, tools);
}

export function messagesInputOf(body: MessagesBody): ChatInput {
  const noTools = body.tool_choice?.type === 'none';
  const tools = noTools ? [] : (body.tools ?? []);
  const toolsMarker = tools.findLast((t) => t.cache_control)?.cache_control;
  const chatTools = tools.map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.input_schema }));
  const messages = body.messages.flatMap(turnsOf);
  if (messages.length === 0) throw invalidBody('messages', 'must hold at least 1 message');
  return capBreakpoints({
    model: body.model,
    system: textBlocks(body.system),
    messages,
    temperature: body.temperature ?? SAMPLING_DEFAULTS.temperature,
    topP: body.top_p ?? SAMPLING_DEFAULTS.topP,
    ...(body.top_k ? { topK: body.top_k } : {}),
    maxTokens: body.max_tokens,
    stop: stopList(body.stop_sequences),
    seed: body.seed ?? SAMPLING_DEFAULTS.seed,
    tools: chatTools,
    ...(noTools ? {} : messagesChoice(body.tool_choice, chatTools)),
    ...(toolsMarker ? { toolsCacheTtlSeconds: ttlSeconds(toolsMarker) } : {}),
    ...(body.schema ? { schema: body.schema } : {}),
    surface: 'messages',
    store: body.store ?? false,
    ...(body.metadata?.user_id ? { metadata: { user_id: body.metadata.user_id } } : {}),
    includeReasoning:
      body.thinking !== undefined && body.thinking.type !== 'disabled' && body.thinking.display !== 'omitted',
  });
}
