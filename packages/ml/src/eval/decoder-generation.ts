/**
 * Held-out F1, precision and recall of a decoder adapter: each held-out chat row's last assistant reply is the
 * reference, the turns before it the prompt; the model's greedy reply to that prompt (the served generation at
 * temperature 0) is scored against the reference by SQuAD's token overlap (token-f1.ts), and the per-example
 * figures are averaged. The cost is bounded: at most {@link DECODER_GENERATION_EVAL}.maxExamples rows (the first ones
 * of the held-out split, in file order) and at most `maxTokens` generated tokens (bytes) each.
 */
import { AppError } from '@whetstone/errors';
import { validateChatRows, type ChatRow } from '../decoder/chat-data';
import {
  decodeAdapterBundle,
  encodeAdapterBundle,
  evaluateDecoderBundle,
  type DecoderMetrics,
  type DecoderTrainResult,
} from '../decoder/lora';
import { loadDecoder, type Decoder } from '../decoder/serve';
import type { ChatMessage } from '../decoder/tokenizer';
import { meanTokenPRF } from './token-f1';

/** The bounds of a generation evaluation: rows scored and tokens (bytes) generated per row. */
export const DECODER_GENERATION_EVAL = { maxExamples: 32, maxTokens: 64 } as const;

/** Held-out generation figures, beside a decoder's loss and perplexity. */
export interface DecoderGenerationScores {
  /** Mean per-example token-overlap F1 of the greedy replies against the references (SQuAD's). */
  f1: number;
  precision: number;
  recall: number;
  /** Held-out rows whose reply was generated and scored. */
  generation_examples: number;
  /** The most tokens (bytes) generated for one reply. */
  generation_max_tokens: number;
}

/** A decoder's held-out metrics: loss and perplexity (lora.ts) and generation F1. */
export type DecoderEvaluation = DecoderMetrics & DecoderGenerationScores;

/** A row's prompt (every turn before its last trained assistant reply) and that reply; null when it has none. */
function promptAndReference(row: ChatRow): { prompt: ChatMessage[]; reference: string } | null {
  const at = row.messages.findLastIndex((m) => m.role === 'assistant' && m.weight !== 0 && m.content.length > 0);
  if (at < 0) return null;
  const prompt = row.messages.slice(0, at).map(({ role, content }) => ({ role, content }));
  return { prompt, reference: row.messages[at]!.content };
}

/** Bounds of one scoring, and the signal that cancels it (a stopped job). */
export interface GenerationEvalOptions {
  maxExamples?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

/** The greedy reply of `decoder` to `prompt`, at most `maxTokens` tokens. */
async function greedyReply(
  decoder: Pick<Decoder, 'generate'>,
  prompt: ChatMessage[],
  maxTokens: number,
  signal?: AbortSignal,
) {
  let text = '';
  const options = { temperature: 0, max_tokens: maxTokens, seed: 0, ...(signal ? { signal } : {}) };
  for await (const piece of decoder.generate(prompt, options)) text += piece.text;
  return text;
}

/** Generation F1, precision and recall of `decoder` on held-out chat rows, within the bounds given. */
export async function scoreGenerations(
  decoder: Pick<Decoder, 'generate'>,
  rows: readonly unknown[],
  options: GenerationEvalOptions = {},
): Promise<DecoderGenerationScores> {
  const { maxExamples = DECODER_GENERATION_EVAL.maxExamples, maxTokens = DECODER_GENERATION_EVAL.maxTokens } = options;
  const examples = validateChatRows(rows, 'heldout')
    .map(promptAndReference)
    .filter((e) => e !== null)
    .slice(0, maxExamples);
  const pairs: { prediction: string; reference: string }[] = [];
  for (const { prompt, reference } of examples) {
    const prediction = await greedyReply(decoder, prompt, maxTokens, options.signal);
    if (options.signal?.aborted) throw new AppError('Cancelled', 'TRAINING_CANCELLED', 'training was cancelled');
    pairs.push({ prediction, reference });
  }
  return { ...meanTokenPRF(pairs), generation_examples: pairs.length, generation_max_tokens: maxTokens };
}

/**
 * How evaluations score a decoder adapter bundle on held-out chat rows: loss, perplexity and token accuracy (with
 * the adapter and of the base alone), and the generation F1, precision and recall.
 */
export async function evaluateDecoder(bundle: Uint8Array, rows: readonly unknown[]): Promise<DecoderEvaluation> {
  const losses = evaluateDecoderBundle(bundle, rows);
  return { ...losses, ...(await scoreGenerations(loadDecoder(bundle), rows)) };
}

/**
 * A finished decoder run with its generation scores on the held-out rows added to its metrics, in the manifest the
 * bundle carries too. No held-out rows: the run as it was.
 */
export async function scoreDecoderRun(
  run: DecoderTrainResult,
  heldout: readonly unknown[],
  options: GenerationEvalOptions = {},
): Promise<{
  bundle: Uint8Array;
  manifest: DecoderTrainResult['manifest'];
  metrics: DecoderMetrics & Partial<DecoderGenerationScores>;
}> {
  if (heldout.length === 0) return run;
  const metrics = { ...run.metrics, ...(await scoreGenerations(loadDecoder(run.bundle), heldout, options)) };
  const manifest = { ...run.manifest, metrics };
  return { bundle: encodeAdapterBundle(manifest, decodeAdapterBundle(run.bundle).adapter), manifest, metrics };
}
