import { AppError } from '@whetstone/errors';
import type { ConversationsPort, HistoryPort } from '../../../../application/history-ports';
import type {
  ChatBatches,
  ChatDone,
  ChatPiece,
  ChatTokenLogprob,
  Inference,
  Principal,
} from '../../../../application/ports';
import {
  backgroundResponse,
  cancelBackground,
  checkBackground,
  deleteBackground,
  startBackground,
} from './background-responses';
import { authOf } from '../../auth';
import { invalidBody, parseParams } from '../../validate';
import type { Api } from '../../api';
import {
  type ChatReply,
  collectChat,
  errorBodyOf,
  pumpChat,
  Sse,
  startChat,
  type ChatStart,
  type StreamWriter,
  ToolCallAssembler,
} from './chat-run';
import { type ReplyItems, withConversation } from './conversations';
import { callItem, messageItem, OutputItems, reasoningItem, type Item } from './responses.items';
import { ResponsesBody, responsesInputOf } from './responses.schema';
import {
  continuedConversation,
  CursorQuery,
  cursorPage,
  deleteStoredCall,
  inputItemsOf,
  RESPONSE_ID_PREFIX,
  RESPONSES,
  responseOfRecord,
  storedResponse,
} from './stored-responses';
import { responsesUsage, xService } from './usage';

/** POST /v1/responses: the Response object, or its event stream (response.created … response.completed). */

/** When a Response was asked for, the metadata it carries and the conversation (`conv_…`) it belongs to. */
interface ResponseMeta {
  created: number;
  metadata: Record<string, string>;
  conversation?: string | undefined;
}

/** The Response object; `done` absent while it is in progress. */
function responseObject(start: ResponseMeta, id: string, model: string, output: Item[], done?: ChatDone) {
  const incomplete = done && (done.finishReason === 'length' || done.finishReason === 'content_filter');
  return {
    id: `${RESPONSE_ID_PREFIX}${id}`,
    object: 'response',
    created_at: start.created,
    status: !done ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    model,
    output,
    error: null,
    incomplete_details: incomplete
      ? { reason: done.finishReason === 'length' ? 'max_output_tokens' : 'content_filter' }
      : null,
    usage: done ? responsesUsage(done.usage) : null,
    metadata: start.metadata,
    conversation: start.conversation ? { id: start.conversation } : null,
    x_service: done ? xService(done) : null,
  };
}

async function response(start: ChatStart, model: string, includeReasoning: boolean, joined?: Joined) {
  const reply = await collectChat(start);
  await joined?.append(reply);
  return responseOfReply(reply, { ...start, conversation: joined?.publicId }, model, includeReasoning);
}

/** A call in a conversation: its public id and UUID, and what appends the call's items once it has answered. */
interface Joined {
  publicId: string;
  id: string;
  append: (reply: ReplyItems) => Promise<void>;
}

/** The stream writer that collects the reply and appends it to the conversation before the stream ends. */
function appending(writer: StreamWriter, joined: Joined): StreamWriter {
  let text = '';
  let responseId = '';
  const tools = new ToolCallAssembler();
  return {
    piece(piece, index) {
      responseId = piece.responseId;
      text += piece.text;
      tools.add(piece.toolCalls);
      writer.piece(piece, index);
    },
    fail: (err) => writer.fail(err),
    async finish() {
      await joined.append({ responseId, text, toolCalls: tools.all() });
      await writer.finish();
    },
  };
}

/** The Response object of a whole reply (a JSON answer, or a background Response's result). */
export function responseOfReply(reply: ChatReply, meta: ResponseMeta, model: string, includeReasoning: boolean) {
  const id = reply.responseId;
  const output: Item[] = [];
  if (includeReasoning && reply.reasoning) output.push(reasoningItem(id, reply.reasoning));
  if (reply.text || reply.toolCalls.length === 0) output.push(messageItem(id, reply.text, reply.logprobs));
  reply.toolCalls.forEach((c, i) => output.push(callItem(id, i, c.id, c.name, c.arguments)));
  return { ...responseObject(meta, id, model, output, reply.done), output_text: reply.text };
}

const PART = { type: 'output_text', annotations: [], logprobs: [] };

function eventWriter(sse: Sse, start: ResponseMeta, model: string, includeReasoning: boolean): StreamWriter {
  let id = '';
  const items = new OutputItems(sse);
  let logprobs: ChatTokenLogprob[] = [];
  const text = (delta: string, tokens: ChatTokenLogprob[] = []) => {
    items.append(
      'text',
      delta,
      () => messageItem(id, null),
      () => {
        logprobs = [];
        items.send('response.content_part.added', { ...items.at(), content_index: 0, part: { ...PART, text: '' } });
      },
      (all) => {
        items.send('response.output_text.done', { ...items.at(), content_index: 0, text: all, logprobs });
        const part = { ...PART, text: all, logprobs };
        items.send('response.content_part.done', { ...items.at(), content_index: 0, part });
        return messageItem(id, all, logprobs);
      },
    );
    logprobs.push(...tokens);
    if (delta) items.send('response.output_text.delta', { ...items.at(), content_index: 0, delta, logprobs: tokens });
  };
  const reasoning = (delta: string) => {
    const part = (t: string) => ({ ...items.at(), summary_index: 0, part: { type: 'summary_text', text: t } });
    items.append(
      'reasoning',
      delta,
      () => reasoningItem(id, ''),
      () => items.send('response.reasoning_summary_part.added', part('')),
      (all) => {
        items.send('response.reasoning_summary_text.done', { ...items.at(), summary_index: 0, text: all });
        items.send('response.reasoning_summary_part.done', part(all));
        return reasoningItem(id, all);
      },
    );
    items.send('response.reasoning_summary_text.delta', { ...items.at(), summary_index: 0, delta });
  };
  const call = (index: number, callId: string, name: string, delta: string) => {
    items.append(
      `call:${index}`,
      delta,
      () => callItem(id, index, callId, name, null),
      () => undefined,
      (all) => {
        items.send('response.function_call_arguments.done', { ...items.at(), arguments: all });
        return callItem(id, index, callId, name, all);
      },
    );
    if (delta) items.send('response.function_call_arguments.delta', { ...items.at(), delta });
  };
  return {
    piece(piece: ChatPiece) {
      if (!id) {
        id = piece.responseId;
        items.send('response.created', { response: responseObject(start, id, model, []) });
        items.send('response.in_progress', { response: responseObject(start, id, model, []) });
      }
      if (includeReasoning && piece.reasoning) reasoning(piece.reasoning);
      if (piece.text) text(piece.text, piece.logprobs);
      for (const d of piece.toolCalls) call(d.index, d.id ?? '', d.name ?? '', d.arguments ?? '');
      if (!piece.done) return;
      if (items.output.length === 0) text('');
      items.close();
      const final = responseObject(start, id, model, items.output, piece.done);
      items.send(`response.${final.status}`, { response: final });
    },
    fail(err: unknown) {
      const { error } = errorBodyOf(err, 'openai') as { error: Record<string, unknown> };
      items.send('error', { code: error.code, message: error.message, param: error.param });
    },
    finish() {},
  };
}

/** The conversation `previous_response_id` continues; without history (a gateway that has none) it is refused. */
async function continuation(history: HistoryPort | undefined, principal: Principal, id: string) {
  if (!history)
    throw invalidBody('previous_response_id', 'needs inference history: send the whole conversation in input');
  return continuedConversation(await storedResponse(history, principal, id, 'previous_response_id'));
}

/** The call's conversation, when it names one: its items lead the input, and the call's items are appended after. */
async function joinConversation(
  conversations: ConversationsPort | undefined,
  principal: Principal,
  body: ResponsesBody,
): Promise<{ body: ResponsesBody; joined?: Joined }> {
  if (!body.conversation) return { body };
  const publicId = typeof body.conversation === 'string' ? body.conversation : body.conversation.id;
  if (body.previous_response_id)
    throw invalidBody('conversation', 'cannot be given with previous_response_id: a conversation carries the context');
  if (body.background) throw invalidBody('conversation', 'is not supported with background: leave one of them out');
  if (!conversations) throw invalidBody('conversation', 'needs inference history: send the conversation in input');
  const found = await withConversation(conversations, principal, body, publicId);
  return { body: found.body, joined: { publicId, id: found.id, append: found.append } };
}

export function registerResponsesRoute(
  api: Api,
  inference: Inference,
  history?: HistoryPort,
  batches?: ChatBatches,
  conversations?: ConversationsPort,
): void {
  api.route(
    {
      method: 'post',
      path: '/v1/responses',
      summary:
        'OpenAI-compatible Responses call (JSON, or SSE events with stream: true); stored unless store: false, as OpenAI',
      tag: 'Compatible surfaces',
      auth: 'key',
      response: {
        status: 200,
        description:
          'The `response` object, or with stream: true its named events (response.created … response.completed); errors use the OpenAI envelope',
      },
      body: ResponsesBody,
    },
    async ({ res, body: asked }) => {
      const { body, joined } = await joinConversation(conversations, authOf(res).principal, asked);
      const previous = body.previous_response_id
        ? await continuation(history, authOf(res).principal, body.previous_response_id)
        : undefined;
      const input = { ...responsesInputOf(body, previous), ...(joined ? { conversationId: joined.id } : {}) };
      if (body.background) {
        checkBackground(body);
        if (!batches)
          throw new AppError(
            'FailedPrecondition',
            'BACKGROUND_UNAVAILABLE',
            'Background responses are not served here.',
          );
        return startBackground(batches, authOf(res).principal, input, body.model);
      }
      const start = await startChat(inference, res, input);
      if (!body.stream) return response(start, body.model, input.includeReasoning, joined);
      const sse = new Sse(res);
      const meta = { ...start, conversation: joined?.publicId };
      const writer = eventWriter(sse, meta, body.model, input.includeReasoning);
      return pumpChat(start, sse, joined ? appending(writer, joined) : writer);
    },
  );
}

/**
 * GET and DELETE /v1/responses/:response_id, and its input items: a stored Responses call (`store: true`) of the
 * caller's team, or a background one (asked of the router's batches first); POST …/cancel for a background one.
 */
export function registerStoredResponseRoute(api: Api, history: HistoryPort, batches?: ChatBatches): void {
  api.route(
    {
      method: 'get',
      path: '/v1/responses/:response_id',
      summary: 'OpenAI-compatible retrieval of a stored Response (one made with store: true)',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description: 'The `response` object as POST /v1/responses answered it; 404 in the OpenAI envelope otherwise',
      },
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const id = String(req.params.response_id);
      const background = batches ? await backgroundResponse(batches, principal, id) : null;
      return background ?? responseOfRecord(await storedResponse(history, principal, id));
    },
  );

  if (batches) registerCancelRoute(api, batches);

  api.route(
    {
      method: 'delete',
      path: '/v1/responses/:response_id',
      summary:
        'OpenAI-compatible deletion of a stored Response: its inference record goes from history for good (docs/api.md)',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description: '`{id, object: "response", deleted: true}`; 404 in the OpenAI envelope for an id not stored',
      },
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const id = String(req.params.response_id);
      // A background call's batch goes first (409 while it runs); its record, once stored, as any stored call's.
      const background = batches ? await deleteBackground(batches, principal, id) : false;
      const deleted = await deleteStoredCall(RESPONSES, history, principal, id).catch((err: unknown) => {
        if (background && err instanceof AppError && err.kind === 'NotFound') return id;
        throw err;
      });
      return { id: deleted, object: 'response', deleted: true };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/responses/:response_id/input_items',
      summary: 'OpenAI-compatible list of the input items a stored Response was answered from',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description:
          '`{object: "list", data, first_id, last_id, has_more}`: the turns, earlier ones a previous_response_id brought in included; `limit` (1–100, default 20), `order` (`desc` default), `after`, `before`',
      },
    },
    async ({ req, res }) => {
      const q = parseParams(CursorQuery, req.query, 'query');
      const record = await storedResponse(history, authOf(res).principal, String(req.params.response_id));
      return cursorPage(inputItemsOf(record), { ...q, limit: q.limit ?? 20, order: q.order ?? 'desc' });
    },
  );
}

/** POST /v1/responses/:response_id/cancel: a background Response not yet running ends `cancelled`. */
function registerCancelRoute(api: Api, batches: ChatBatches): void {
  api.route(
    {
      method: 'post',
      path: '/v1/responses/:response_id/cancel',
      summary: 'OpenAI-compatible cancellation of a background Response (one made with background: true)',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description:
          'The `response` object: `cancelled` when it had not started, else as it stands (a running call finishes)',
      },
    },
    async ({ req, res }) => {
      const id = String(req.params.response_id);
      const cancelled = await cancelBackground(batches, authOf(res).principal, id);
      if (!cancelled)
        throw new AppError('NotFound', 'RESPONSE_NOT_FOUND', `No background response with id '${id.slice(0, 200)}'`);
      return cancelled;
    },
  );
}
