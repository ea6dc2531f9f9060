import { z } from 'zod';
import type { ChatInput, ChatPiece, ChatTokenLogprob, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import {
  Choices,
  choiceInputs,
  MaxTokens,
  ModelId,
  LogitBias,
  logitBiasField,
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
import { type ChatReply, collectChoices, errorBodyOf, pumpChoices, Sse, startChats, type ChatStart } from './chat-run';
import { openAiChunks } from './openai-chunks';
import { openAiUsage, totalUsage, xService } from './usage';
import { invalidBody } from '../../validate';

/**
 * POST /v1/completions: the legacy text completion; each opaque prompt (no cache markers) is one user turn, and a
 * request of several prompts answers each, as OpenAI's does.
 */

/** At most this many completions per request (prompts × n), each a call run side by side. */
export const MAX_COMPLETIONS = 16;

export const CompletionsBody = z.object({
  model: ModelId,
  prompt: z.union([Text, z.array(Text).min(1, 'must hold at least 1 prompt').max(MAX_COMPLETIONS)], {
    error: `must be a string or a list of 1–${MAX_COMPLETIONS} strings (token arrays are not taken)`,
  }),
  max_tokens: MaxTokens.nullish(),
  temperature: Temperature.nullish(),
  top_p: TopP.nullish(),
  stop: Stop.nullish(),
  seed: Seed.nullish(),
  frequency_penalty: Penalty.nullish(),
  presence_penalty: Penalty.nullish(),
  logit_bias: LogitBias.nullish(),
  n: Choices.nullish(),
  // The legacy API's bound: at most 5 alternatives per token.
  logprobs: z.number().int().min(0).max(5).nullish(),
  // The prompt's echo is not computed: asking for it is refused.
  echo: z.literal(false, 'echo is not offered; leave it out').nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  store: z.boolean().nullish(),
});
type CompletionsBody = z.infer<typeof CompletionsBody>;

const promptsOf = (body: CompletionsBody) => (typeof body.prompt === 'string' ? [body.prompt] : body.prompt);

/** A request of one prompt as the chat core's input (a batch request's line holds one prompt). */
export function completionsInputOf(body: CompletionsBody): ChatInput {
  const prompts = promptsOf(body);
  if (prompts.length > 1) throw invalidBody('prompt', 'must hold 1 prompt in a batch request');
  return promptInput(body, prompts[0]!);
}

/**
 * The calls of a request: each prompt's `n` choices, prompt by prompt (OpenAI's order: choice `p × n + i` is choice
 * `i` of prompt `p`), with each choice's prompt length, where its legacy text offsets start.
 */
function completionsInputsOf(body: CompletionsBody): { inputs: ChatInput[]; promptLengths: number[] } {
  const prompts = promptsOf(body);
  const n = body.n ?? 1;
  if (prompts.length * n > MAX_COMPLETIONS)
    throw invalidBody(
      'n',
      `must be at most ${Math.floor(MAX_COMPLETIONS / prompts.length)} with ${prompts.length} prompts (at most ${MAX_COMPLETIONS} completions per request)`,
    );
  if (prompts.length > 1 && body.store)
    throw invalidBody('prompt', 'must hold 1 prompt with store: true (a stored completion keeps one choice)');
  return {
    inputs: prompts.flatMap((p) => choiceInputs(promptInput(body, p), n)),
    promptLengths: prompts.flatMap((p) => Array.from({ length: n }, () => p.length)),
  };
}

function promptInput(body: CompletionsBody, prompt: string): ChatInput {
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
    ...logitBiasField(body.logit_bias),
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
  /** Per choice, the characters of its prompt: its first completion token's offset. */
  promptLengths: number[];
}

/** The text_completion object of a whole reply (a JSON answer, or a batch request's result). */
export function textCompletionOfReply(reply: ChatReply, created: number, model: string, shown: Shown) {
  return textCompletionOfReplies([reply], created, model, shown);
}

/** The text_completion object of `n` whole replies, choice i being reply i; usage adds theirs up. */
function textCompletionOfReplies(replies: ChatReply[], created: number, model: string, shown: Shown) {
  const first = replies[0]!;
  return {
    id: `cmpl-${first.responseId}`,
    object: 'text_completion',
    created,
    model,
    choices: replies.map((reply, index) => ({
      index,
      text: reply.text,
      logprobs: shown.logprobs ? legacyLogprobs(reply.logprobs, shown.promptLengths[index] ?? 0) : null,
      finish_reason: reply.done.finishReason,
    })),
    usage: openAiUsage(totalUsage(replies.map((r) => r.done.usage))),
    x_service: xService(first.done),
  };
}

/** Chunks as chat completions' (openai-chunks.ts): usage on the one choice's last chunk, or after all `n`. */
function chunkWriter(sse: Sse, starts: ChatStart[], model: string, shown: Shown) {
  const chunks = openAiChunks(sse, starts, { object: 'text_completion', idPrefix: 'cmpl-', model });
  const at = starts.map((_, i) => shown.promptLengths[i] ?? 0);
  const chunk = (piece: ChatPiece, index: number, text: string, tail: boolean) => {
    const logprobs = shown.logprobs && !tail ? legacyLogprobs(piece.logprobs, at[index]!) : null;
    at[index]! += text.length;
    const finish = tail ? piece.done!.finishReason : null;
    chunks.choice({ index, text, logprobs, finish_reason: finish }, tail ? piece.done : undefined);
  };
  return {
    piece(piece: ChatPiece, index: number) {
      if (piece.text) chunk(piece, index, piece.text, false);
      if (piece.done) chunk(piece, index, '', true);
    },
    fail: (err: unknown) => sse.send(errorBodyOf(err, 'openai')),
    finish: () => chunks.end(),
  };
}

export function registerCompletionsRoute(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/v1/completions',
      summary: 'OpenAI-compatible legacy text completion of one or more prompts (JSON, or SSE with stream: true)',
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
      const { inputs, promptLengths } = completionsInputsOf(body);
      const starts = await startChats(inference, res, inputs);
      const shown = { logprobs: body.logprobs != null, promptLengths };
      const created = starts[0]!.created;
      if (!body.stream) return textCompletionOfReplies(await collectChoices(starts), created, body.model, shown);
      const sse = new Sse(res);
      return pumpChoices(starts, sse, chunkWriter(sse, starts, body.model, shown));
    },
  );
}
