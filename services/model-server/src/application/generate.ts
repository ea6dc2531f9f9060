import {
  decoderTokens,
  type Decoder,
  type GenerateChunk,
  type GenerateOptions as DecoderOptions,
  type PrefixCache,
} from '@whetstone/ml';

/** A decoder's options, and whether to generate nothing (the prompt's log probabilities alone). */
export type GenerateOptions = DecoderOptions & { prompt_only?: boolean };
import type { Decoders } from './decoders';
import type { ModelRef } from './ports';

export type ChatTurn = Parameters<Decoder['generate']>[0][number];

/** How a reply ended, and its token counts (bytes); cache counts are parts of `inputTokens`. */
export interface GenerateEnd {
  reason: 'stop' | 'length';
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** The stop sequence that ended the reply; empty when none did. */
  stopSequence: string;
}

export interface GenerateStream {
  chunks: AsyncIterable<GenerateChunk>;
  finish(): GenerateEnd;
}

/** Tokens generated when the call sets no limit, and the most any call may ask for. */
const DEFAULT_MAX_TOKENS = 128;
const MAX_TOKENS = 2048;

/**
 * Streams a decoder's reply; prompt and reply are counted in bytes, the
 * decoder's tokens. With a prefix cache, the options' breakpoints are read from
 * and written to it; without one they are ignored.
 */
export async function generate(
  decoders: Decoders,
  prefixCache: PrefixCache | undefined,
  ref: ModelRef,
  messages: ChatTurn[],
  options: GenerateOptions,
): Promise<GenerateStream> {
  const decoder = await decoders.get(ref);
  const stream = decoder.generate(messages, {
    ...options,
    prefix_cache: prefixCache,
    top_p: options.top_p && options.top_p > 0 ? options.top_p : 1,
    max_tokens: options.prompt_only
      ? 0
      : options.max_tokens && options.max_tokens > 0
        ? Math.min(options.max_tokens, MAX_TOKENS)
        : DEFAULT_MAX_TOKENS,
  });
  let output = 0;
  const inputTokens = messages.reduce((n, m) => n + decoderTokens(m.content), 0);
  return {
    chunks: (async function* () {
      for await (const chunk of stream) {
        output += decoderTokens(chunk.text);
        yield chunk;
      }
    })(),
    finish: () => ({
      reason: stream.finishReason() ?? 'length',
      inputTokens,
      outputTokens: output,
      cacheReadTokens: stream.cacheUsage().readTokens,
      cacheWriteTokens: stream.cacheUsage().writeTokens,
      stopSequence: stream.stopSequence() ?? '',
    }),
  };
}
