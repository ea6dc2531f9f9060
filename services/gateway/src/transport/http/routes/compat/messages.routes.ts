import { z } from 'zod';
import type { ChatDone, ChatFinishReason, ChatPiece, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { type ChatReply, collectChat, errorBodyOf, pumpChat, Sse, startChat, type ChatStart } from './chat-run';
import { CountTokensBody, MessagesBody, messagesInputOf } from './messages.schema';
import { messagesUsage, xService } from './usage';

/** POST /v1/messages: Anthropic's message object, or its event stream (message_start … message_stop). */

const STOP_REASON: Record<ChatFinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

/** Anthropic's stop_reason and stop_sequence: `stop_sequence` when a given sequence ended the reply. */
const stopOf = (done: ChatDone) =>
  done.stopSequence
    ? { stop_reason: 'stop_sequence', stop_sequence: done.stopSequence }
    : { stop_reason: STOP_REASON[done.finishReason], stop_sequence: null };

const parseInput = (args: string): unknown => {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return {};
  }
};

const messageShell = (id: string, model: string) => ({
  id: `msg_${id}`,
  type: 'message',
  role: 'assistant',
  model,
});

async function message(start: ChatStart, model: string, includeThinking: boolean) {
  return messageOfReply(await collectChat(start), model, includeThinking);
}

/** Anthropic's `message` object of a whole reply (a JSON answer, or a batch request's result). */
export function messageOfReply(reply: ChatReply, model: string, includeThinking: boolean) {
  const content: Record<string, unknown>[] = [];
  if (includeThinking && reply.reasoning) content.push({ type: 'thinking', thinking: reply.reasoning, signature: '' });
  if (reply.text || reply.toolCalls.length === 0) content.push({ type: 'text', text: reply.text });
  for (const c of reply.toolCalls)
    content.push({ type: 'tool_use', id: c.id, name: c.name, input: parseInput(c.arguments) });
  return {
    ...messageShell(reply.responseId, model),
    content,
    ...stopOf(reply.done),
    usage: messagesUsage(reply.done.usage),
    x_service: xService(reply.done),
  };
}

type Open = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; call: number };

/** Content blocks open and close as the kind of delta changes; usage is whole on message_delta. */
function eventWriter(sse: Sse, model: string, includeThinking: boolean) {
  let started = false;
  let index = -1;
  let open: Open | null = null;
  const send = (type: string, data: Record<string, unknown>) => sse.send({ type, ...data }, type);
  const close = () => {
    if (open) send('content_block_stop', { index });
    open = null;
  };
  const openBlock = (next: Open, contentBlock: Record<string, unknown>) => {
    close();
    index += 1;
    open = next;
    send('content_block_start', { index, content_block: contentBlock });
  };
  const ensure = (kind: 'text' | 'thinking') => {
    if (open?.kind === kind) return;
    openBlock(
      { kind },
      kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' },
    );
  };
  const finish = (done: ChatDone) => {
    if (index < 0) ensure('text');
    close();
    send('message_delta', {
      delta: stopOf(done),
      usage: messagesUsage(done.usage),
      x_service: xService(done),
    });
  };
  return {
    piece(piece: ChatPiece) {
      if (!started) {
        started = true;
        const usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
        send('message_start', {
          message: {
            ...messageShell(piece.responseId, model),
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage,
          },
        });
      }
      if (includeThinking && piece.reasoning) {
        ensure('thinking');
        send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece.reasoning } });
      }
      if (piece.text) {
        ensure('text');
        send('content_block_delta', { index, delta: { type: 'text_delta', text: piece.text } });
      }
      for (const d of piece.toolCalls) {
        const current = open as Open | null;
        if (current?.kind !== 'tool' || current.call !== d.index)
          openBlock(
            { kind: 'tool', call: d.index },
            { type: 'tool_use', id: d.id ?? '', name: d.name ?? '', input: {} },
          );
        if (d.arguments)
          send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: d.arguments } });
      }
      if (piece.done) finish(piece.done);
    },
    fail(err: unknown) {
      sse.send(errorBodyOf(err, 'anthropic'), 'error');
    },
    finish() {
      send('message_stop', {});
    },
  };
}

/** Anthropic's error envelope; billing denials add which denial (`code`) and where to resolve it. */
const MessagesError = z
  .object({
    type: z.literal('error'),
    error: z.object({
      type: z.string().openapi({ example: 'billing_error' }),
      message: z.string(),
      code: z
        .enum(['out_of_credits', 'direct_model_requires_credits', 'credit_ceiling_reached', 'card_required'])
        .optional()
        .openapi({ description: 'Billing denials (402, 403) only' }),
      resolution_url: z.string().optional().openapi({ description: 'Billing denials only: where to resolve it' }),
    }),
  })
  .openapi('MessagesError');

/** The errors the Messages endpoint documents beyond the shared ones. */
const MESSAGES_ERRORS = {
  402: {
    description: 'Out of spendable credits, in the Anthropic envelope with `code` and `resolution_url`',
    schema: MessagesError,
  },
  403: {
    description: 'Overage ceiling reached or a card required (billing denials carry `code`, `resolution_url`)',
    schema: MessagesError,
  },
  529: { description: 'Upstream capacity saturated (this endpoint only; elsewhere 503)', schema: MessagesError },
};

export function registerMessagesRoute(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/v1/messages',
      summary: 'Anthropic-compatible Messages call (JSON, or SSE events with stream: true)',
      tag: 'Compatible surfaces',
      auth: 'key',
      response: {
        status: 200,
        description:
          'The `message` object, or with stream: true its named events (message_start … message_stop); errors use the Anthropic envelope',
      },
      errors: MESSAGES_ERRORS,
      body: MessagesBody,
    },
    async ({ res, body }) => {
      const input = messagesInputOf(body);
      const start = await startChat(inference, res, input);
      if (!body.stream) return message(start, body.model, input.includeReasoning);
      const sse = new Sse(res);
      return pumpChat(start, sse, eventWriter(sse, body.model, input.includeReasoning));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/v1/messages/count_tokens',
      summary: 'Anthropic-compatible token count of a Messages request (no model runs; nothing is billed)',
      tag: 'Compatible surfaces',
      auth: 'key',
      response: {
        status: 200,
        description:
          '`{input_tokens}`: exact for built-in models and trained jobs, an estimate (4 characters a token) for upstream models',
      },
      body: CountTokensBody,
    },
    async ({ res, body }) => ({
      input_tokens: await inference.countChatTokens(authOf(res).principal, messagesInputOf({ ...body, max_tokens: 1 })),
    }),
  );
}
