import type { ChatPiece, ChatTokenLogprob, ChatToolCallDelta, Inference } from '../../../../application/ports';
import type { HistoryPort } from '../../../../application/history-ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { parseParams } from '../../validate';
import { choiceInputs, toolCallOut } from './blocks';
import { ChatCompletionsBody, chatInputOf } from './chat-completions.schema';
import { type ChatReply, collectChoices, errorBodyOf, pumpChoices, Sse, startChats, type ChatStart } from './chat-run';
import {
  CHAT_COMPLETIONS,
  completionMessagesOf,
  completionOfRecord,
  CursorQuery,
  cursorPage,
  deleteStoredCall,
  storedCall,
} from './stored-responses';
import { registerCompletionListRoutes } from './stored-completions';
import { openAiChunks } from './openai-chunks';
import { openAiUsage, totalUsage, xService } from './usage';

/** POST /v1/chat/completions: OpenAI's chat.completion object, or its chunk stream ending with `data: [DONE]`. */

const toolDeltaOut = (d: ChatToolCallDelta) => ({
  index: d.index,
  ...(d.id ? { id: d.id, type: 'function' as const } : {}),
  function: { ...(d.name ? { name: d.name } : {}), arguments: d.arguments ?? '' },
});

/** What a reply shows beyond its text: reasoning, and token log probabilities, when the call asked for them. */
interface Shown {
  reasoning: boolean;
  logprobs: boolean;
}

/** A choice's `logprobs`: null unless the call asked for them. */
const logprobsOut = (shown: Shown, content: ChatTokenLogprob[]) => (shown.logprobs ? { content, refusal: null } : null);

/** The chat.completion object of a whole reply (a JSON answer, or a batch request's result). */
export function completionOfReply(reply: ChatReply, created: number, model: string, shown: Shown) {
  return completionOfReplies([reply], created, model, shown);
}

/** The chat.completion object of `n` whole replies, choice i being reply i; usage adds theirs up. */
function completionOfReplies(replies: ChatReply[], created: number, model: string, shown: Shown) {
  const first = replies[0]!;
  return {
    id: `chatcmpl-${first.responseId}`,
    object: 'chat.completion',
    created,
    model,
    choices: replies.map((reply, index) => ({
      index,
      message: {
        role: 'assistant',
        content: reply.text || (reply.toolCalls.length ? null : ''),
        refusal: null,
        ...(shown.reasoning ? { reasoning_content: reply.reasoning || null } : {}),
        ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls.map(toolCallOut) } : {}),
      },
      logprobs: logprobsOut(shown, reply.logprobs),
      finish_reason: reply.done.finishReason,
    })),
    usage: openAiUsage(totalUsage(replies.map((r) => r.done.usage))),
    x_service: xService(first.done),
  };
}

/** The chunk table of the spec, for one or `n` choices (openai-chunks.ts). */
function chunkWriter(sse: Sse, starts: ChatStart[], model: string, shown: Shown) {
  const chunks = openAiChunks(sse, starts, { object: 'chat.completion.chunk', idPrefix: 'chatcmpl-', model });
  const opened = new Set<number>();
  const chunk = (piece: ChatPiece, index: number, delta: Record<string, unknown>, finish: string | null) => {
    const logprobs = !finish && piece.logprobs.length ? logprobsOut(shown, piece.logprobs) : null;
    chunks.choice({ index, delta, logprobs, finish_reason: finish }, finish ? piece.done : undefined);
  };
  return {
    piece(piece: ChatPiece, index: number) {
      const first = !opened.has(index);
      const delta: Record<string, unknown> = {};
      if (first) Object.assign(delta, { role: 'assistant' });
      if (piece.text || first) delta.content = piece.text;
      if (shown.reasoning && piece.reasoning) delta.reasoning_content = piece.reasoning;
      if (piece.toolCalls.length) delta.tool_calls = piece.toolCalls.map(toolDeltaOut);
      if (first || piece.text || delta.reasoning_content !== undefined || delta.tool_calls)
        chunk(piece, index, delta, null);
      opened.add(index);
      if (piece.done) chunk(piece, index, {}, piece.done.finishReason);
    },
    fail(err: unknown) {
      sse.send(errorBodyOf(err, 'openai'));
    },
    finish: () => chunks.end(),
  };
}

export function registerChatCompletionsRoute(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/v1/chat/completions',
      summary: 'OpenAI-compatible chat completion (JSON, or SSE chunks with stream: true)',
      tag: 'Compatible surfaces',
      auth: 'key',
      response: {
        status: 200,
        description:
          '`chat.completion` JSON, or with stream: true a text/event-stream of `chat.completion.chunk` events ending with `data: [DONE]`; errors use the OpenAI envelope',
      },
      body: ChatCompletionsBody,
    },
    async ({ res, body }) => {
      const input = chatInputOf(body);
      const starts = await startChats(inference, res, choiceInputs(input, body.n));
      const shown = { reasoning: input.includeReasoning, logprobs: input.logprobs !== undefined };
      if (!body.stream) return completionOfReplies(await collectChoices(starts), starts[0]!.created, body.model, shown);
      const sse = new Sse(res);
      return pumpChoices(starts, sse, chunkWriter(sse, starts, body.model, shown));
    },
  );
}

/** GET /v1/chat/completions/:completion_id and its messages: a stored chat completion (`store: true`) of the team. */
export function registerStoredCompletionRoutes(api: Api, history: HistoryPort): void {
  const stored = (res: Parameters<typeof authOf>[0], id: unknown) =>
    storedCall(CHAT_COMPLETIONS, history, authOf(res).principal, String(id));
  api.route(
    {
      method: 'get',
      path: '/v1/chat/completions/:completion_id',
      summary: 'OpenAI-compatible retrieval of a stored chat completion (one made with store: true)',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description: 'The `chat.completion` object as the call answered it; 404 in the OpenAI envelope otherwise',
      },
    },
    async ({ req, res }) => completionOfRecord(await stored(res, req.params.completion_id)),
  );
  registerCompletionListRoutes(api, history);
  api.route(
    {
      method: 'delete',
      path: '/v1/chat/completions/:completion_id',
      summary:
        'OpenAI-compatible deletion of a stored chat completion: its inference record goes from history for good (docs/api.md)',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description: '`{id, object: "chat.completion.deleted", deleted: true}`; 404 in the OpenAI envelope otherwise',
      },
    },
    async ({ req, res }) => ({
      id: await deleteStoredCall(CHAT_COMPLETIONS, history, authOf(res).principal, String(req.params.completion_id)),
      object: 'chat.completion.deleted',
      deleted: true,
    }),
  );
  api.route(
    {
      method: 'get',
      path: '/v1/chat/completions/:completion_id/messages',
      summary: 'OpenAI-compatible list of the messages a stored chat completion was answered from',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description:
          '`{object: "list", data, first_id, last_id, has_more}`; `limit` (1–100, default 20), `order` (`asc` default), `after`, `before`',
      },
    },
    async ({ req, res }) => {
      const q = parseParams(CursorQuery, req.query, 'query');
      const record = await stored(res, req.params.completion_id);
      return cursorPage(completionMessagesOf(record), { ...q, limit: q.limit ?? 20, order: q.order ?? 'asc' });
    },
  );
}
