import { z } from 'zod';
import type { ChatInput, ChatPiece, ChatTokenLogprob, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import {
  Choices,
  choiceInputs,
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
import { bestReplies } from './best-of';

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
  // 0 only with echo: the prompt alone, scored when logprobs is given (OpenAI's way to score a text).
  max_tokens: z.number().int().min(0).max(1_000_000).nullish(),
  temperature: Temperature.nullish(),
  top_p: TopP.nullish(),
  stop: Stop.nullish(),
  seed: Seed.nullish(),
  frequency_penalty: Penalty.nullish(),
  presence_penalty: Penalty.nullish(),
  logit_bias: LogitBias.nullish(),
  n: Choices.nullish(),
  // Candidates per prompt, of which the n with the highest log probability per token answer (best-of.ts).
  best_of: z.number().int().min(1).max(MAX_COMPLETIONS).nullish(),
  // Insertion is not offered: the models only continue after the prompt.
  suffix: z
    .string()
    .max(0, 'is not offered: the models only continue after the prompt (no insertion); leave it out')
    .nullish(),
  // The legacy API's bound: at most 5 alternatives per token.
  logprobs: z.number().int().min(0).max(5).nullish(),
  // The prompt before each choice's text; with logprobs, its tokens scored too (built-in decoders only).
  echo: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  store: z.boolean().nullish(),
});
type CompletionsBody = z.infer<typeof CompletionsBody>;

const promptsOf = (body: CompletionsBody) => (typeof body.prompt === 'string' ? [body.prompt] : body.prompt);

/** A request of one prompt as the chat core's input (a batch request's line holds one prompt, and no echo). */
export function completionsInputOf(body: CompletionsBody): ChatInput {
  const prompts = promptsOf(body);
  if (prompts.length > 1) throw invalidBody('prompt', 'must hold 1 prompt in a batch request');
  if (body.echo) throw invalidBody('echo', 'is not taken in a batch request (the prompt is not kept with the result)');
  if ((body.best_of ?? 1) > 1) throw invalidBody('best_of', 'must be 1 in a batch request (a line answers one choice)');
  return promptInput(body, prompts[0]!);
}

/** How many candidates each prompt gets (`best_of`, default `n`), checked against `n`, `stream` and `store`. */
function candidatesOf(body: CompletionsBody): number {
  const n = body.n ?? 1;
  const best = body.best_of ?? n;
  if (best < n) throw invalidBody('best_of', `must be at least n (${n})`);
  if (best > n && body.stream)
    throw invalidBody('best_of', 'must equal n with stream: true (the best are known only once all have ended)');
  if (best > 1 && body.store)
    throw invalidBody('best_of', 'must be 1 with store: true (a stored completion keeps one choice)');
  return best;
}

/**
 * The calls of a request: each prompt's candidates (`n`, or `best_of` when larger), prompt by prompt (OpenAI's
 * order: choice `p × n + i` is choice `i` of prompt `p`), with each answered choice's prompt and its length, where
 * its legacy text offsets start.
 */
function completionsInputsOf(body: CompletionsBody): {
  inputs: ChatInput[];
  candidates: number;
  promptLengths: number[];
  prompts: string[];
} {
  const prompts = promptsOf(body);
  const n = body.n ?? 1;
  const candidates = candidatesOf(body);
  if (prompts.length * candidates > MAX_COMPLETIONS)
    throw invalidBody(
      candidates > n ? 'best_of' : 'n',
      `must be at most ${Math.floor(MAX_COMPLETIONS / prompts.length)} with ${prompts.length} prompts (at most ${MAX_COMPLETIONS} completions per request)`,
    );
  if (prompts.length > 1 && body.store)
    throw invalidBody('prompt', 'must hold 1 prompt with store: true (a stored completion keeps one choice)');
  const perChoice = prompts.flatMap((p) => Array.from({ length: n }, () => p));
  // Ranking candidates needs their tokens' log probabilities, shown only when asked for.
  const ranked = (input: ChatInput): ChatInput =>
    candidates > n && input.logprobs === undefined ? { ...input, logprobs: 0 } : input;
  return {
    inputs: prompts.flatMap((p) => choiceInputs(ranked(promptInput(body, p)), candidates)),
    candidates,
    promptLengths: perChoice.map((p) => p.length),
    prompts: perChoice,
  };
}

function promptInput(body: CompletionsBody, prompt: string): ChatInput {
  if (body.max_tokens === 0 && !body.echo)
    throw invalidBody('max_tokens', 'must be at least 1 (0 answers the prompt alone, with echo: true)');
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
    ...(body.echo && body.logprobs != null ? { promptLogprobs: true } : {}),
    ...(body.echo && body.max_tokens === 0 ? { promptOnly: true } : {}),
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

/** What a completion shows: its tokens only when the call asked for log probabilities, its prompt only with echo. */
interface Shown {
  logprobs: boolean;
  /** Per choice, the characters of its prompt: its first completion token's offset. */
  promptLengths: number[];
  /** Per choice, the prompt echoed before its text (OpenAI's `echo`); absent: none is. */
  echoed?: string[];
}

/**
 * The legacy `logprobs` of an echoed prompt: its tokens from offset 0, the first with no log probability and no
 * alternatives, as OpenAI gives it (nothing comes before it).
 */
function promptLegacyLogprobs(tokens: ChatTokenLogprob[]) {
  const out: {
    tokens: string[];
    token_logprobs: (number | null)[];
    top_logprobs: (Record<string, number> | null)[];
    text_offset: number[];
  } = legacyLogprobs(tokens, 0);
  if (out.tokens.length) {
    out.token_logprobs[0] = null;
    out.top_logprobs[0] = null;
  }
  return out;
}

/** A choice's legacy `logprobs`: its echoed prompt's tokens (with echo), then its completion's. */
function choiceLogprobs(reply: ChatReply, shown: Shown, index: number) {
  const completion = legacyLogprobs(reply.logprobs, shown.promptLengths[index] ?? 0);
  if (!shown.echoed) return completion;
  const prompt = promptLegacyLogprobs(reply.promptLogprobs ?? []);
  return {
    tokens: [...prompt.tokens, ...completion.tokens],
    token_logprobs: [...prompt.token_logprobs, ...completion.token_logprobs],
    top_logprobs: [...prompt.top_logprobs, ...completion.top_logprobs],
    text_offset: [...prompt.text_offset, ...completion.text_offset],
  };
}

/** The text_completion object of a whole reply (a JSON answer, or a batch request's result). */
export function textCompletionOfReply(reply: ChatReply, created: number, model: string, shown: Shown) {
  return textCompletionOfReplies([reply], created, model, shown);
}

/**
 * The text_completion object of `n` whole replies, choice i being reply i; usage adds up those of `billed` (every
 * candidate of `best_of`; by default the replies themselves).
 */
function textCompletionOfReplies(
  replies: ChatReply[],
  created: number,
  model: string,
  shown: Shown,
  billed: ChatReply[] = replies,
) {
  const first = replies[0]!;
  return {
    id: `cmpl-${first.responseId}`,
    object: 'text_completion',
    created,
    model,
    choices: replies.map((reply, index) => ({
      index,
      text: (shown.echoed?.[index] ?? '') + reply.text,
      logprobs: shown.logprobs ? choiceLogprobs(reply, shown, index) : null,
      finish_reason: reply.done.finishReason,
    })),
    usage: openAiUsage(totalUsage(billed.map((r) => r.done.usage))),
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
  // With echo, each choice's first chunk is its prompt (and, with logprobs, the prompt's scored tokens).
  const toEcho = starts.map((_, i) => shown.echoed?.[i]);
  const echo = (piece: ChatPiece, index: number) => {
    const prompt = toEcho[index];
    if (prompt === undefined) return;
    toEcho[index] = undefined;
    const logprobs = shown.logprobs ? promptLegacyLogprobs(piece.promptLogprobs ?? []) : null;
    chunks.choice({ index, text: prompt, logprobs, finish_reason: null });
  };
  return {
    piece(piece: ChatPiece, index: number) {
      echo(piece, index);
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
      const { inputs, candidates, promptLengths, prompts } = completionsInputsOf(body);
      const starts = await startChats(inference, res, inputs);
      const shown = { logprobs: body.logprobs != null, promptLengths, ...(body.echo ? { echoed: prompts } : {}) };
      const created = starts[0]!.created;
      if (!body.stream) {
        const all = await collectChoices(starts);
        const n = body.n ?? 1;
        // With best_of equal to n every candidate answers, in seed order (choice i is seed + i).
        const answered = candidates > n ? bestReplies(all, candidates, n) : all;
        return textCompletionOfReplies(answered, created, body.model, shown, all);
      }
      const sse = new Sse(res);
      return pumpChoices(starts, sse, chunkWriter(sse, starts, body.model, shown));
    },
  );
}
