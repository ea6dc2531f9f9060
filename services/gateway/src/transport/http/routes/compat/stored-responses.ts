import { z } from 'zod';
import { AppError, isUuid } from '@whetstone/errors';
import type {
  HistoryPort,
  InferenceRecordView,
  RecordedTurnView,
  SurfaceName,
} from '../../../../application/history-ports';
import type { ChatBlock, ChatTurn, ChatUsageView, Principal } from '../../../../application/ports';
import { invalidQuery } from '../../validate';
import { toolCallOut, turn, openAiList } from './blocks';
import { callItem, messageItem, type Item } from './responses.items';
import { openAiUsage, responsesUsage } from './usage';

/**
 * Stored calls of OpenAI's surfaces (`store: true`) read back from inference history: the Response object of
 * GET /v1/responses/:response_id and the conversation a `previous_response_id` continues, and the chat.completion
 * of GET /v1/chat/completions/:completion_id. A call's public id is its surface's prefix and its inference id;
 * only the team's own stored calls of that surface are found (docs/api.md).
 */

/** One surface's stored calls: the id prefix of its answers, its history surface, and its not-found reason. */
export interface StoredKind {
  prefix: string;
  surface: SurfaceName;
  noun: string;
  reason: string;
}

export const RESPONSES: StoredKind = {
  prefix: 'resp_',
  surface: 'responses',
  noun: 'Response',
  reason: 'RESPONSE_NOT_FOUND',
};
export const CHAT_COMPLETIONS: StoredKind = {
  prefix: 'chatcmpl-',
  surface: 'chat-completions',
  noun: 'Chat completion',
  reason: 'CHAT_COMPLETION_NOT_FOUND',
};
export const RESPONSE_ID_PREFIX = RESPONSES.prefix;

const notFound = (kind: StoredKind, id: string, param?: string) =>
  new AppError('NotFound', kind.reason, `${kind.noun} with id '${id.slice(0, 200)}' not found`, {
    ...(param
      ? {
          fieldErrors: [
            {
              field: param,
              message: 'names no stored response of this team (only calls made with store: true are kept)',
            },
          ],
        }
      : {}),
  });

/** The stored call of `kind` that `id` names, or NotFound (in the OpenAI envelope, naming `param` when given). */
export async function storedCall(
  kind: StoredKind,
  history: HistoryPort,
  principal: Principal,
  id: string,
  param?: string,
): Promise<InferenceRecordView> {
  const inferenceId = id.startsWith(kind.prefix) ? id.slice(kind.prefix.length) : '';
  if (!isUuid(inferenceId)) throw notFound(kind, id, param);
  try {
    const record = await history.get(principal, inferenceId);
    if (record.surface !== kind.surface) throw notFound(kind, id, param);
    return record;
  } catch (err) {
    if (err instanceof AppError && err.kind === 'NotFound') throw notFound(kind, id, param);
    throw err;
  }
}

/**
 * Deletes the stored call of `kind` that `id` names, for good (history keeps its id only, so it never returns);
 * NotFound as {@link storedCall}. Returns the public id.
 */
export async function deleteStoredCall(
  kind: StoredKind,
  history: HistoryPort,
  principal: Principal,
  id: string,
): Promise<string> {
  const record = await storedCall(kind, history, principal, id);
  try {
    await history.delete(principal, record.inference_id);
  } catch (err) {
    // Deleted by a concurrent request between the two calls.
    if (err instanceof AppError && err.kind === 'NotFound') throw notFound(kind, id);
    throw err;
  }
  return `${kind.prefix}${record.inference_id}`;
}

/** {@link storedCall} for a Responses call. */
export const storedResponse = (history: HistoryPort, principal: Principal, id: string, param?: string) =>
  storedCall(RESPONSES, history, principal, id, param);

type ToolCall = { id: string; name: string; arguments: string };

/** What a decoder or upstream call's record holds as its output (chat-relay's outcome). */
interface RecordedReply {
  text?: unknown;
  finish_reason?: unknown;
  tool_calls?: ToolCall[];
}

/**
 * The reply a stored call gave: a model's text and calls, or for an extraction model (the call carried a `schema`)
 * its JSON result, which is what the assistant text was.
 */
function replyOf(record: InferenceRecordView): { text: string; calls: ToolCall[]; finish: unknown } {
  const first = record.outputs[0] ?? {};
  if (record.schema) return { text: JSON.stringify(first), calls: [], finish: 'stop' };
  const reply = first as RecordedReply;
  return {
    text: typeof reply.text === 'string' ? reply.text : '',
    calls: reply.tool_calls ?? [],
    finish: reply.finish_reason,
  };
}

/**
 * A record's usage as a live call's last piece reports it, for the surfaces' usage shapes: the record counts every
 * input token in input_tokens, the piece only those neither read from nor written to a cache.
 */
const usageViewOf = ({ usage: u }: InferenceRecordView): ChatUsageView => ({
  input_tokens: u.input_tokens - u.cache_read_tokens - u.cache_write_tokens,
  cache_read_tokens: u.cache_read_tokens,
  cache_write_tokens: u.cache_write_tokens,
  output_tokens: u.output_tokens,
  reasoning_tokens: u.reasoning_tokens,
  cost_credits: u.cost_credits,
});

const ROLES = new Set<string>(['user', 'assistant', 'tool']);

const turnOf = (m: RecordedTurnView): ChatTurn =>
  turn(m.role as ChatTurn['role'], m.content ? [{ text: m.content }] : [], {
    toolCalls: m.tool_calls ?? [],
    toolCallId: m.tool_call_id ?? '',
  });

/**
 * What a continuation inherits from the Response it follows: that call's system prompt (its instructions and
 * system or developer items, as one), its turns, and its reply (text and function calls; reasoning is not
 * carried, as OpenAI does not carry it either unless asked).
 */
export function continuedConversation(record: InferenceRecordView): { system: ChatBlock[]; turns: ChatTurn[] } {
  if (record.status !== 'succeeded')
    throw new AppError('InvalidArgument', 'RESPONSE_NOT_COMPLETED', 'Previous response did not complete', {
      fieldErrors: [
        {
          field: 'previous_response_id',
          message: `names a response that ended with ${record.error_code ?? 'an error'}: send the conversation in input instead`,
        },
      ],
    });
  const messages = record.messages ?? [];
  const system = messages.filter((m) => m.role === 'system').map((m) => ({ text: m.content }));
  const turns = messages.filter((m) => ROLES.has(m.role)).map(turnOf);
  const { text, calls } = replyOf(record);
  if (text || calls.length) turns.push(turn('assistant', text ? [{ text }] : [], { toolCalls: calls }));
  return { system, turns };
}

/** The Response object of a stored call, as POST /v1/responses answered it (reasoning left out). */
export function responseOfRecord(record: InferenceRecordView) {
  const id = record.inference_id;
  const { text, calls, finish } = replyOf(record);
  const failed = record.status !== 'succeeded';
  const incomplete = !failed && (finish === 'length' || finish === 'content_filter');
  const output: Item[] = [];
  if (text || calls.length === 0)
    output.push({ ...messageItem(id, text), ...(failed || incomplete ? { status: 'incomplete' } : {}) });
  calls.forEach((c, i) => output.push(callItem(id, i, c.id, c.name, c.arguments)));
  return {
    id: `${RESPONSE_ID_PREFIX}${id}`,
    object: 'response',
    created_at: Math.floor(Date.parse(record.created_at ?? '') / 1000) || 0,
    status: failed ? 'failed' : incomplete ? 'incomplete' : 'completed',
    // What the call asked for: a project's id when it went through one (the record names the model that answered).
    model: record.project_id ?? record.model_id,
    output,
    output_text: text,
    error: failed
      ? { code: (record.error_code ?? 'server_error').toLowerCase(), message: 'The response did not complete' }
      : null,
    incomplete_details: incomplete ? { reason: finish === 'length' ? 'max_output_tokens' : 'content_filter' } : null,
    usage: responsesUsage(usageViewOf(record)),
    metadata: record.metadata,
    conversation: record.conversation_id ? { id: record.conversation_id } : null,
    x_service: { inference_id: id },
  };
}

/**
 * The items a stored call was answered from, oldest first, as `GET /v1/responses/:id/input_items` lists them:
 * its turns, those a `previous_response_id` brought in included (as other Responses-compatible services do),
 * but not its system prompt (`instructions` are not input items). Ids are stable: the inference id and the
 * item's place.
 */
export function inputItemsOf(record: InferenceRecordView): Record<string, unknown>[] {
  const id = record.inference_id;
  return (record.messages ?? [])
    .filter((m) => ROLES.has(m.role))
    .flatMap((m, i): Record<string, unknown>[] => {
      if (m.role === 'tool')
        return [
          {
            type: 'function_call_output',
            id: `fco_${id}_${i}`,
            call_id: m.tool_call_id ?? '',
            output: m.content,
            status: 'completed',
          },
        ];
      const calls = m.tool_calls ?? [];
      const part =
        m.role === 'assistant'
          ? { type: 'output_text', text: m.content, annotations: [] }
          : { type: 'input_text', text: m.content };
      const message = { type: 'message', id: `msg_${id}_${i}`, role: m.role, status: 'completed', content: [part] };
      return [
        ...(m.content || calls.length === 0 ? [message] : []),
        ...calls.map((c, k) => ({
          type: 'function_call',
          id: `fc_${id}_${i}_${k}`,
          call_id: c.id,
          name: c.name,
          arguments: c.arguments,
          status: 'completed',
        })),
      ];
    });
}

/** The query of OpenAI's cursor lists: `limit` 1–100, `order`, and `after`/`before` an item's id. */
export const CursorQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  after: z.string().max(200).optional(),
  before: z.string().max(200).optional(),
});

/** One page of a list in OpenAI's cursor shape; `after` and `before` name an item of it (422 otherwise). */
export function cursorPage(
  items: Record<string, unknown>[],
  q: { limit: number; order: 'asc' | 'desc'; after?: string | undefined; before?: string | undefined },
) {
  const ordered = q.order === 'desc' ? [...items].reverse() : items;
  const at = (param: 'after' | 'before', cursor: string) => {
    const i = ordered.findIndex((item) => item.id === cursor);
    if (i < 0) throw invalidQuery(param, `names no item of this list: '${cursor}'`);
    return i;
  };
  const start = q.after ? at('after', q.after) + 1 : 0;
  const end = q.before ? at('before', q.before) : ordered.length;
  const data = ordered.slice(start, Math.max(start, end)).slice(0, q.limit);
  return openAiList(data, start + data.length < end);
}

/** The chat.completion object of a stored chat-completions call, as it answered (reasoning left out). */
export function completionOfRecord(record: InferenceRecordView) {
  const { text, calls, finish } = replyOf(record);
  return {
    id: `${CHAT_COMPLETIONS.prefix}${record.inference_id}`,
    object: 'chat.completion',
    created: Math.floor(Date.parse(record.created_at ?? '') / 1000) || 0,
    // What the call asked for: a project's id when it went through one.
    model: record.project_id ?? record.model_id,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (calls.length ? null : ''),
          refusal: null,
          ...(calls.length
            ? {
                tool_calls: calls.map(toolCallOut),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: typeof finish === 'string' ? finish : 'stop',
      },
    ],
    usage: openAiUsage(usageViewOf(record)),
    metadata: record.metadata,
    x_service: { inference_id: record.inference_id },
  };
}

/**
 * The messages of a stored chat-completions call, oldest first, as `GET /v1/chat/completions/:id/messages` lists
 * them: `{id, role, content, tool_calls?, tool_call_id?}` with the system prompt as its first `system` message.
 */
export function completionMessagesOf(record: InferenceRecordView): Record<string, unknown>[] {
  return (record.messages ?? []).map((m, i) => ({
    id: `${CHAT_COMPLETIONS.prefix}${record.inference_id}-${i}`,
    role: m.role,
    content: m.content || (m.tool_calls?.length ? null : ''),
    ...(m.tool_calls?.length
      ? {
          tool_calls: m.tool_calls.map(toolCallOut),
        }
      : {}),
    ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
  }));
}
