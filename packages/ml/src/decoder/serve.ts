import { Rng, softmaxInPlace } from '../nn';
import { loadDecoderBase } from './base';
import { validateChatRows } from './chat-data';
import { chatLoss, DECODER_BASE, decodeAdapterBundle, type DecoderManifest } from './lora';
import { DecoderState, type LoraAdapter, mergeAdapter, type Weights } from './model';
import { type ChatMessage, encodePrompt, END, SYSTEM } from './tokenizer';

/** Sampling options of one generation. */
export interface GenerateOptions {
  /** 0 means greedy. Default 1. */
  temperature?: number;
  /** Nucleus sampling mass. Default 1. */
  top_p?: number;
  /** Maximum tokens (bytes) generated. Default 128. */
  max_tokens?: number;
  /** Generation ends before the first occurrence of any of these; it is not returned. */
  stop?: string[];
  seed?: number;
  signal?: AbortSignal;
}

/** A piece of a streamed reply. */
export interface GenerateChunk {
  text: string;
}

/** A servable decoder: the base alone, or the base with an adapter merged in. */
export interface Decoder {
  readonly name: string;
  readonly manifest: DecoderManifest | null;
  /** Streams the assistant reply to `messages`, a few bytes at a time. */
  generate(
    messages: readonly ChatMessage[],
    options?: GenerateOptions,
  ): AsyncIterable<GenerateChunk> & { finishReason: () => 'stop' | 'length' | null };
  /** Loss and perplexity of the assistant replies in chat rows. */
  perplexity(rows: readonly unknown[]): { loss: number; perplexity: number };
}

/** Samples a token from logits with temperature and top-p. */
export function sampleToken(logits: Float32Array, temperature: number, topP: number, rng: Rng): number {
  if (temperature <= 0) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    return best;
  }
  const p = new Float32Array(logits.length);
  for (let i = 0; i < p.length; i++) p[i] = logits[i]! / temperature;
  softmaxInPlace(p, 0, p.length);
  const order = Array.from(p.keys()).sort((a, b) => p[b]! - p[a]! || a - b);
  let keep = order.length;
  let mass = 0;
  for (let k = 0; k < order.length; k++) {
    mass += p[order[k]!]!;
    if (mass >= topP) {
      keep = k + 1;
      break;
    }
  }
  let r = rng.next() * Math.min(mass, 1);
  for (let k = 0; k < keep; k++) {
    r -= p[order[k]!]!;
    if (r <= 0) return order[k]!;
  }
  return order[keep - 1]!;
}

/**
 * whetstone-decoder-base, or the base with a LoRA adapter bundle from
 * `trainDecoderLora`, merged into the weights for serving (W + s·A·B: no
 * LoRA cost per token). `weights` are the merged weights, `adapter` the stored one.
 */
export function loadDecoder(bundle?: Uint8Array): Decoder & { weights: Weights; adapter: LoraAdapter | null } {
  const base = loadDecoderBase();
  const { config } = base;
  const decoded = bundle ? decodeAdapterBundle(bundle) : null;
  const adapter = decoded?.adapter ?? null;
  const merged = adapter ? mergeAdapter(config, base.weights, adapter) : base.weights;

  function generate(
    messages: readonly ChatMessage[],
    opts: GenerateOptions = {},
  ): AsyncIterable<GenerateChunk> & { finishReason: () => 'stop' | 'length' | null } {
    let finish: 'stop' | 'length' | null = null;
    const iterable = {
      finishReason: () => finish,
      async *[Symbol.asyncIterator](): AsyncGenerator<GenerateChunk> {
        const { temperature = 1, top_p = 1, max_tokens = 128, stop = [], seed = 0 } = opts;
        const rng = new Rng(seed);
        // Keep the most recent context: the system turn is dropped before the reply's own tokens.
        let prompt = encodePrompt(messages);
        const budget = Math.max(1, config.context - Math.min(max_tokens, config.context / 2));
        if (prompt.length > budget) prompt = prompt.slice(prompt.length - budget);
        const history = [...prompt];
        let state = new DecoderState(config, merged);
        let logits: Float32Array = new Float32Array(0);
        for (const t of prompt) logits = state.step(t);
        const decoder = new TextDecoder('utf-8');
        let text = '';
        let emitted = 0;
        const holdBack = Math.max(0, ...stop.map((s) => s.length - 1));
        for (let n = 0; n < max_tokens; n++) {
          if (opts.signal?.aborted) break;
          const token = sampleToken(logits, temperature, top_p, rng);
          if (token === END || token >= SYSTEM) {
            finish = 'stop';
            break;
          }
          text += decoder.decode(Uint8Array.of(token), { stream: true });
          const hit = stop.map((s) => (s ? text.indexOf(s) : -1)).filter((i) => i >= 0);
          if (hit.length) {
            const at = Math.min(...hit);
            if (at > emitted) yield { text: text.slice(emitted, at) };
            finish = 'stop';
            return;
          }
          const safe = text.length - holdBack;
          if (safe > emitted) {
            yield { text: text.slice(emitted, safe) };
            emitted = safe;
          }
          history.push(token);
          if (state.full) {
            // Slide: re-read the second half of the context.
            state = new DecoderState(config, merged);
            for (const t of history.slice(history.length - config.context / 2)) logits = state.step(t);
          } else logits = state.step(token);
          await new Promise((resolve) => setImmediate(resolve));
        }
        finish ??= 'length';
        text += decoder.decode();
        if (text.length > emitted) yield { text: text.slice(emitted) };
      },
    };
    return iterable;
  }

  return {
    name: DECODER_BASE,
    manifest: decoded?.manifest ?? null,
    weights: merged,
    adapter,
    generate,
    perplexity(rows) {
      const loss = chatLoss(config, merged, validateChatRows(rows, 'rows'));
      return { loss, perplexity: Math.exp(loss) };
    },
  };
}
