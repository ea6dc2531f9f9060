import { z } from 'zod';
import type { ChatInput, ChatPiece, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { MaxTokens, ModelId, SAMPLING_DEFAULTS, Seed, Stop, stopList, Temperature, Text, TopP, turn } from './blocks';
import { type ChatReply, collectChat, errorBodyOf, pumpChat, Sse, startChat, type ChatStart } from './chat-run';
import { openAiUsage, xService } from './usage';

/** POST /v1/completions: the legacy text completion; one opaque prompt (no cache markers) as one user turn. */

export const CompletionsBody = z.object({
  model: ModelId,
  prompt: z.union([Text, z.array(Text).length(1, 'must hold exactly 1 prompt')]),
  max_tokens: MaxTokens.nullish(),
  temperature: Temperature.nullish(),
  top_p: TopP.nullish(),
  stop: Stop.nullish(),
  seed: Seed.nullish(),
  n: z.literal(1, 'only n = 1 is supported').nullish(),
  // Token log probabilities and the prompt's echo are not computed: asking for them is refused.
  logprobs: z.literal(0, 'token log probabilities are not offered; leave logprobs out').nullish(),
  echo: z.literal(false, 'echo is not offered; leave it out').nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  store: z.boolean().nullish(),
});
type CompletionsBody = z.infer<typeof CompletionsBody>;

export function completionsInputOf(body: CompletionsBody): ChatInput {
  const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!;
  return {
    model: body.model,
    system: [],
    messages: [turn('user', [{ text: prompt }])],
    temperature: body.temperature ?? SAMPLING_DEFAULTS.temperature,
    topP: body.top_p ?? SAMPLING_DEFAULTS.topP,
    maxTokens: body.max_tokens ?? SAMPLING_DEFAULTS.maxTokens,
    stop: stopList(body.stop),
    seed: body.seed ?? SAMPLING_DEFAULTS.seed,
    tools: [],
    surface: 'completions',
    store: body.store ?? false,
    includeReasoning: false,
  };
}

async function completion(start: ChatStart, model: string) {
  return textCompletionOfReply(await collectChat(start), start.created, model);
}

/** The text_completion object of a whole reply (a JSON answer, or a batch request's result). */
export function textCompletionOfReply(reply: ChatReply, created: number, model: string) {
  return {
    id: `cmpl-${reply.responseId}`,
    object: 'text_completion',
    created,
    model,
    choices: [{ index: 0, text: reply.text, logprobs: null, finish_reason: reply.done.finishReason }],
    usage: openAiUsage(reply.done.usage),
    x_service: xService(reply.done),
  };
}

function chunkWriter(sse: Sse, start: ChatStart, model: string) {
  const chunk = (piece: ChatPiece, text: string, tail: boolean) =>
    sse.send({
      id: `cmpl-${piece.responseId}`,
      object: 'text_completion',
      created: start.created,
      model,
      choices: [{ index: 0, text, logprobs: null, finish_reason: tail ? piece.done!.finishReason : null }],
      usage: tail ? openAiUsage(piece.done!.usage) : null,
      x_service: tail ? xService(piece.done!) : null,
    });
  return {
    piece(piece: ChatPiece) {
      if (piece.text) chunk(piece, piece.text, false);
      if (piece.done) chunk(piece, '', true);
    },
    fail: (err: unknown) => sse.send(errorBodyOf(err, 'openai')),
    finish: () => sse.end('data: [DONE]\n\n'),
  };
}

export function registerCompletionsRoute(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/v1/completions',
      summary: 'OpenAI-compatible legacy text completion of one prompt (JSON, or SSE with stream: true)',
      tag: 'Compatible surfaces',
      auth: 'key',
      response: {
        status: 200,
        description:
          '`text_completion` JSON, or with stream: true a text/event-stream of `text_completion` chunks ending with `data: [DONE]`; errors use the OpenAI envelope',
      },
      body: CompletionsBody,
    },
    async ({ res, body }) => {
      const start = await startChat(inference, res, completionsInputOf(body));
      if (!body.stream) return completion(start, body.model);
      const sse = new Sse(res);
      return pumpChat(start, sse, chunkWriter(sse, start, body.model));
    },
  );
}
