import type { ChatPiece, ChatToolCall, ChatToolCallDelta, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { ChatCompletionsBody, chatInputOf } from './chat-completions.schema';
import { collectChat, errorBodyOf, pumpChat, Sse, startChat, type ChatStart } from './chat-run';
import { openAiUsage, xService } from './usage';

/** POST /v1/chat/completions: OpenAI's chat.completion object, or its chunk stream ending with `data: [DONE]`. */

const toolCallOut = (c: ChatToolCall) => ({
  id: c.id,
  type: 'function' as const,
  function: { name: c.name, arguments: c.arguments },
});

const toolDeltaOut = (d: ChatToolCallDelta) => ({
  index: d.index,
  ...(d.id ? { id: d.id, type: 'function' as const } : {}),
  function: { ...(d.name ? { name: d.name } : {}), arguments: d.arguments ?? '' },
});

async function completion(start: ChatStart, model: string, includeReasoning: boolean) {
  const reply = await collectChat(start);
  return {
    id: `chatcmpl-${reply.responseId}`,
    object: 'chat.completion',
    created: start.created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text || (reply.toolCalls.length ? null : ''),
          refusal: null,
          ...(includeReasoning ? { reasoning_content: reply.reasoning || null } : {}),
          ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls.map(toolCallOut) } : {}),
        },
        logprobs: null,
        finish_reason: reply.done.finishReason,
      },
    ],
    usage: openAiUsage(reply.done.usage),
    x_service: xService(reply.done),
  };
}

/** The chunk table of the spec: usage and x_service are null except on the terminal chunk. */
function chunkWriter(sse: Sse, start: ChatStart, model: string, includeReasoning: boolean) {
  let id = '';
  let opened = false;
  const chunk = (piece: ChatPiece, delta: Record<string, unknown>, finish: string | null, tail = false) => {
    id ||= `chatcmpl-${piece.responseId}`;
    sse.send({
      id,
      object: 'chat.completion.chunk',
      created: start.created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: tail && piece.done ? openAiUsage(piece.done.usage) : null,
      x_service: tail && piece.done ? xService(piece.done) : null,
    });
  };
  return {
    piece(piece: ChatPiece) {
      const delta: Record<string, unknown> = {};
      if (!opened) Object.assign(delta, { role: 'assistant' });
      if (piece.text || !opened) delta.content = piece.text;
      if (includeReasoning && piece.reasoning) delta.reasoning_content = piece.reasoning;
      if (piece.toolCalls.length) delta.tool_calls = piece.toolCalls.map(toolDeltaOut);
      if (!opened || piece.text || delta.reasoning_content !== undefined || delta.tool_calls) chunk(piece, delta, null);
      opened = true;
      if (piece.done) chunk(piece, {}, piece.done.finishReason, true);
    },
    fail(err: unknown) {
      sse.send(errorBodyOf(err, 'openai'));
    },
    finish() {
      sse.end('data: [DONE]\n\n');
    },
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
      const start = await startChat(inference, res, input);
      if (!body.stream) return completion(start, body.model, input.includeReasoning);
      const sse = new Sse(res);
      return pumpChat(start, sse, chunkWriter(sse, start, body.model, input.includeReasoning));
    },
  );
}
