import { z } from 'zod';
import type { ChatInput, ChatPiece, ChatTokenLogprob, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import {
  MaxTokens,
  ModelId,
  Penalty,
  penaltiesOf,
  SAMPLING_DEFAULTS,
  Seed,
  Stop,
  stopList,
  Temperature,
  Text,
  TopP,
  turn,
} from './blocks';
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
  frequency_penalty: Penalty.nullish(),
  presence_penalty: Penalty.nullish(),
  n: z.literal(1, 'only n = 1 is supported').nullish(),
  // The legacy API's bound: at most 5 alternatives per token.
  logprobs: z.number().int().min(0).max(5).nullish(),
  // The prompt's echo is not computed: asking for it is refused.
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
    ...penaltiesOf(body),
    tools: [],
    surface: 'completions',
    store: body.store ?? false,
    includeReasoning: false,
    ...(body.logprobs == null ? {} : { logprobs: body.logprobs }),
  };
}

/**
 * The legacy `logprobs` of some reply tokens: their texts, log probabilities, the most likely tokens at each place as
 * `{token: logprob}`, and each token's character offset in the prompt and completion together (a byte of a longer
 * character has the character's offset). `at` is the offset of the first token's text.
 */
export function legacyLogprobs(tokens: ChatTokenLogprob[], at: number) {
  // Decoded as the reply was: a token's offset is where the text stood before it, and moves once its bytes yield text.
  const decoder = new TextDecoder();
  const offsets: number[] = [];
  let offset = at;
  for (const t of tokens) {
    offsets.push(offset);
    offset += decoder.decode(Uint8Array.from(t.bytes), { stream: true }).length;
  }
  return {
    tokens: tokens.map((t) => t.token),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) => Object.fromEntries(t.top_logprobs.map((o) => [o.token, o.logprob]))),
    text_offset: offsets,
  };
}

/** What a completion shows of its tokens: null unless the call asked for log probabilities. */
interface Shown {
  logprobs: boolean;
  /** Characters of the prompt: the first completion token's offset. */
  promptLength: number;
}

async function completion(start: ChatStart, model: string, shown: Shown) {
  return textCompletionOfReply(await collectChat(start), start.created, model, shown);
}

/** The text_completion object of a whole reply (a JSON answer, or a batch request's result). */
export function textCompletionOfReply(reply: ChatReply, created: number, model: string, shown: Shown) {
  const logprobs = shown.logprobs ? legacyLogprobs(reply.logprobs, shown.promptLength) : null;
  return {
    id: `cmpl-${reply.responseId}`,
    object: 'text_completion',
    created,
    model,
    choices: [{ index: 0, text: reply.text, logprobs, finish_reason: reply.done.finishReason }],
    usage: openAiUsage(reply.done.usage),
    x_service: xService(reply.done),
  };
}

function chunkWriter(sse: Sse, start: ChatStart, model: string, shown: Shown) {
  let at = shown.promptLength;
  const chunk = (piece: ChatPiece, text: string, tail: boolean) => {
    const logprobs = shown.logprobs && !tail ? legacyLogprobs(piece.logprobs, at) : null;
    at += text.length;
    sse.send({
      id: `cmpl-${piece.responseId}`,
      object: 'text_completion',
      created: start.created,
      model,
      choices: [{ index: 0, text, logprobs, finish_reason: tail ? piece.done!.finishReason : null }],
      usage: tail ? openAiUsage(piece.done!.usage) : null,
      x_service: tail ? xService(piece.done!) : null,
    });
  };
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
      const input = completionsInputOf(body);
      const start = await startChat(inference, res, input);
      const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!;
      const shown = { logprobs: input.logprobs !== undefined, promptLength: prompt.length };
      if (!body.stream) return completion(start, body.model, shown);
      const sse = new Sse(res);
      return pumpChat(start, sse, chunkWriter(sse, start, body.model, shown));
    },
  );
}
