import { z } from 'zod';
import type { ChatBlock, ChatInput, ChatTurn } from '../../../../application/ports';
import {
  block,
  CacheControl,
  capBreakpoints,
  MaxTokens,
  Metadata,
  ModelId,
  SAMPLING_DEFAULTS,
  responseFormatField,
  SchemaExtension,
  Seed,
  TopLogprobs,
  Temperature,
  Text,
  TextFormat,
  TopP,
  turn,
} from './blocks';
import { optsInToReasoning, ReasoningControls } from './chat-completions.schema';
import { invalidBody } from '../../validate';
import { toolChoiceField } from './tool-choice';

/** POST /v1/responses: input text or input messages; markers count on system and developer message blocks only. */

const Part = z.object({
  type: z.enum(['input_text', 'output_text', 'text']),
  text: Text,
  cache_control: CacheControl.nullish(),
});
const MessageItem = z.object({
  type: z.literal('message').optional(),
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([Text, z.array(Part).max(1000)], {
    error: 'must be a string or a list of input_text or output_text parts; image, file and audio parts are not taken',
  }),
});
const FunctionCallItem = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  arguments: z.string().max(1_000_000),
});
const FunctionOutputItem = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1).max(200),
  output: Text,
});
const Item = z.union([MessageItem, FunctionCallItem, FunctionOutputItem]);
/** A Responses input item (also what a conversation holds). */
export const InputItem = Item;
/**
 * A reasoning item of an earlier reply, which clients send back with the rest of its output: accepted and left out
 * of the prompt, as the messages surface leaves out earlier thinking blocks.
 */
const ReasoningItem = z.object({ type: z.literal('reasoning') }).passthrough();
const ITEM_TYPES = 'message, function_call, function_call_output or reasoning';
const RequestItems = z
  .array(z.union([Item, ReasoningItem], { error: `must be a ${ITEM_TYPES} item` }))
  .min(1, 'must hold at least 1 item')
  .max(10_000)
  .transform((items) => items.filter((i): i is z.infer<typeof Item> => i.type !== 'reasoning'));

const Tool = z.object({
  type: z.literal('function'),
  name: z.string().min(1).max(200),
  description: z.string().max(100_000).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});

export const ResponsesBody = z.object({
  model: ModelId,
  input: z.union([Text, RequestItems], { error: `must be a string, or a list of ${ITEM_TYPES} items` }),
  instructions: Text.nullish(),
  max_output_tokens: MaxTokens.nullish(),
  temperature: Temperature.nullish(),
  top_p: TopP.nullish(),
  seed: Seed.nullish(),
  tools: z.array(Tool).max(128).nullish(),
  // A function by name is forced; other object types (hosted tools, allowed_tools) are taken as auto.
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.string(), name: z.string().optional() })], {
      error: 'must be "none", "auto", "required" or {"type": "function", "name": …}',
    })
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  background: z.boolean().nullish(),
  metadata: Metadata.nullish(),
  reasoning: ReasoningControls.nullish(),
  previous_response_id: z.string().min(1).max(200).nullish(),
  conversation: z.union([z.string().min(1).max(200), z.object({ id: z.string().min(1).max(200) })]).nullish(),
  schema: SchemaExtension.nullish(),
  text: z.object({ format: TextFormat.optional() }).nullish(),
  top_logprobs: TopLogprobs.nullish(),
  // What to add to the output; only `message.output_text.logprobs` changes anything, other values are ignored.
  include: z.array(z.string().max(200)).max(20).nullish(),
});

/** Token log probabilities are computed when `include` asks for them or `top_logprobs` asks for alternatives. */
const logprobsOf = (body: ResponsesBody) =>
  body.include?.includes(LOGPROBS_INCLUDE) || body.top_logprobs ? { logprobs: body.top_logprobs ?? 0 } : {};

/** The `include` value that adds the tokens' log probabilities to the reply's text. */
export const LOGPROBS_INCLUDE = 'message.output_text.logprobs';
export type ResponsesBody = z.infer<typeof ResponsesBody>;
type ItemT = z.infer<typeof Item>;
/** One input item of a Responses request (a message, a function call or its output). */
export type ResponseInputItem = ItemT;

function turnOf(item: ItemT): ChatTurn {
  if (item.type === 'function_call')
    return turn('assistant', [], { toolCalls: [{ id: item.call_id, name: item.name, arguments: item.arguments }] });
  if (item.type === 'function_call_output') return turn('tool', [{ text: item.output }], { toolCallId: item.call_id });
  const system = item.role === 'system' || item.role === 'developer';
  const content: ChatBlock[] =
    typeof item.content === 'string'
      ? [{ text: item.content }]
      : item.content.map((p) => block(p.text, p.cache_control ?? undefined, system));
  return turn(system ? 'system' : item.role === 'user' ? 'user' : 'assistant', content);
}

/**
 * `instructions` (never a marker) then leading system and developer messages form the system prompt. A
 * continuation (`previous_response_id`) goes on from the earlier call's turns and reply, and keeps its system
 * prompt unless this request gives instructions or system items of its own, which replace it.
 */
/** Responses' `tool_choice` (not `none`) as a mode: a function by name, `required`, or anything else as auto. */
function responsesChoice(choice: ResponsesBody['tool_choice']): Parameters<typeof toolChoiceField>[0] {
  if (typeof choice === 'object' && choice?.type === 'function') return { mode: 'tool', name: choice.name };
  return { mode: choice === 'required' ? 'required' : 'auto' };
}

export function responsesInputOf(
  body: ResponsesBody,
  previous?: { system: ChatBlock[]; turns: ChatTurn[] },
): ChatInput {
  const turns = typeof body.input === 'string' ? [turn('user', [{ text: body.input }])] : body.input.map(turnOf);
  const lead = turns.findIndex((t) => t.role !== 'system');
  if (lead < 0) throw invalidBody('input', 'must hold at least one user, assistant or tool item');
  const system = [
    ...(body.instructions ? [{ text: body.instructions }] : []),
    ...turns.slice(0, lead).flatMap((t) => t.content),
  ];
  const tools =
    body.tool_choice === 'none'
      ? []
      : (body.tools ?? []).map((t) => ({
          name: t.name,
          description: t.description ?? '',
          parameters: t.parameters ?? { type: 'object', properties: {} },
        }));
  return capBreakpoints({
    model: body.model,
    system: system.length ? system : (previous?.system ?? []),
    messages: [...(previous?.turns ?? []), ...turns.slice(lead)],
    temperature: body.temperature ?? SAMPLING_DEFAULTS.temperature,
    topP: body.top_p ?? SAMPLING_DEFAULTS.topP,
    maxTokens: body.max_output_tokens ?? SAMPLING_DEFAULTS.maxTokens,
    stop: [],
    seed: body.seed ?? SAMPLING_DEFAULTS.seed,
    tools,
    ...(body.tool_choice === 'none'
      ? {}
      : toolChoiceField(responsesChoice(body.tool_choice), body.parallel_tool_calls, tools)),
    ...(body.schema ? { schema: body.schema } : {}),
    ...responseFormatField(body.text?.format),
    surface: 'responses',
    // As OpenAI's Responses API: stored unless the caller says otherwise, so previous_response_id works as sent.
    store: body.store ?? true,
    ...(body.metadata ? { metadata: body.metadata } : {}),
    includeReasoning: optsInToReasoning(body.reasoning),
    ...logprobsOf(body),
  });
}
