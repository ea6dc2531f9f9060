import { createHash } from 'node:crypto';
import { AppError, Reasons } from '@whetstone/errors';
import { Rng, softmaxInPlace } from '../nn';
import { type DecoderBase, loadDecoderBase } from './base';
import { validateChatRows } from './chat-data';
import { chatLoss, DECODER_BASE, decodeAdapterBundle, type DecoderManifest } from './lora';
import { type DecoderConfig, DecoderState, forward, type LoraAdapter, mergeAdapter, type Weights } from './model';
import { LogprobQueue, type TokenLogprob, tokenLogprob } from './logprobs';
import type { CachePoint, PrefixCache } from './prefix-cache';
import { ASSISTANT, type ChatMessage, encodePrompt, encodeText, END, prefixEnd, SYSTEM, USER } from './tokenizer';

/** The most cache breakpoints one call may set. */
export const MAX_CACHE_BREAKPOINTS = 4;

/**
 * The end of a cacheable prompt prefix: every turn before `turn`, and the
 * first `chars` UTF-16 code units of turn `turn`'s content.
 */
export interface CacheBreakpoint {
  turn: number;
  chars: number;
  /** Seconds the entry lives after its last use; 0 or absent: the cache's default. */
  ttl_seconds?: number;
}

/** Sampling options of one generation. */
export interface GenerateOptions {
  /** 0 means greedy. Default 1. */
  temperature?: number;
  /** Nucleus sampling mass. Default 1. */
  top_p?: number;
  /** Only the k most likely tokens are sampled from; 0 or absent keeps them all. */
  top_k?: number;
  /** Lowers each token's logit by this times the times it was already generated (OpenAI's). Default 0. */
  frequency_penalty?: number;
  /** Lowers each already generated token's logit by this, once (OpenAI's). Default 0. */
  presence_penalty?: number;
  /**
   * OpenAI's `logit_bias`: token id (0–259: bytes, then the four chat markers) to a bias from −100 to 100, added to
   * that token's logit before sampling, after the penalties. Log probabilities stay the model's own.
   */
  logit_bias?: Readonly<Record<number, number>>;
  /** Maximum tokens (bytes) generated. Default 128. */
  max_tokens?: number;
  /** Generation ends before the first occurrence of any of these; it is not returned. */
  stop?: string[];
  seed?: number;
  signal?: AbortSignal;
  /** Where prompt prefixes' attention state is read from and written to. Absent: no caching. */
  prefix_cache?: PrefixCache;
  /** At most 4 prefixes that may be read from or written to `prefix_cache`. */
  cache_breakpoints?: readonly CacheBreakpoint[];
  /**
   * When set, each piece carries its tokens' log probabilities with this many of the most likely tokens at each
   * place (0–20). Unset: none are computed.
   */
  logprobs?: number;
  /**
   * With `logprobs`, the first piece (empty text) carries `prompt_logprobs`: the last turn's content tokens, each
   * scored by the model after everything before it (the first after its role marker), at most 100,000 bytes. The
   * prefix cache is neither read nor written for such a call.
   */
  prompt_logprobs?: boolean;
}

/** What the prefix cache did for a call, in prompt content bytes (the unit of its input tokens; markers excluded). */
export interface CacheUsage {
  /** Bytes of the prompt whose attention state came from the cache. */
  readTokens: number;
  /** Bytes of the prompt newly written to the cache (beyond those read). */
  writeTokens: number;
}

/** A reply being generated: its pieces, then why it ended and what the prefix cache did. */
export type GenerateStream = AsyncIterable<GenerateChunk> & {
  finishReason: () => 'stop' | 'length' | null;
  /** The stop sequence that ended the reply; null when none did. */
  stopSequence: () => string | null;
  /** Zero until the prompt has been read (the first piece). */
  cacheUsage: () => CacheUsage;
};

/** A piece of a streamed reply. */
export interface GenerateChunk {
  text: string;
  /** The tokens of `text`, in order, when the call asked for log probabilities. */
  logprobs?: TokenLogprob[];
  /** The last turn's content tokens, on the first piece, when the call asked for `prompt_logprobs`. */
  prompt_logprobs?: TokenLogprob[];
}

/** A servable decoder: the base alone, or the base with an adapter merged in. */
export interface Decoder {
  readonly name: string;
  readonly manifest: DecoderManifest | null;
  /** A digest of the served weights and shape: decoders with equal identities compute the same attention state. */
  readonly identity: string;
  /**
   * Streams the assistant reply to `messages`, a few bytes at a time. Throws
   * InvalidArgument for more than 4 cache breakpoints, for a `logit_bias` key or value out of range, and for a
   * prompt to score (`prompt_logprobs`) longer than 100,000 bytes.
   */
  generate(messages: readonly ChatMessage[], options?: GenerateOptions): GenerateStream;
  /** Loss and perplexity of the assistant replies in chat rows. */
  perplexity(rows: readonly unknown[]): { loss: number; perplexity: number };
}

/**
 * The log probabilities of the last turn's content tokens, each after every token before it in the prompt (the
 * first after the turn's role marker), with the context generation would have: it slides when full, reading the
 * last half again. So a window of `context` tokens is one batched forward pass: the first predicts positions
 * 1…context, and each next one starts half a context before the last one's end and predicts the positions after it.
 * Other work runs between windows (a long prompt takes seconds), and an aborted call stops early.
 */
async function lastTurnLogprobs(
  config: DecoderConfig,
  weights: Weights,
  messages: readonly ChatMessage[],
  opts: GenerateOptions,
): Promise<TokenLogprob[]> {
  const top = opts.logprobs ?? 0;
  const prompt = encodePrompt(messages);
  const last = messages[messages.length - 1];
  // The prompt ends with the last turn's content, its <|end|> and <|assistant|>; position p is scored from the
  // logits after token p − 1.
  const to = prompt.length - 2;
  const from = to - (last ? encodeText(last.content).length : 0);
  const { context, vocab } = config;
  const out: TokenLogprob[] = [];
  for (let start = 0, scored = 0; scored < to - 1;) {
    const end = Math.min(start + context, to - 1);
    const ids = Int32Array.from(prompt.slice(start, end));
    const logits = forward(config, weights, ids, 1, ids.length).data;
    for (let p = Math.max(scored + 1, from); p <= end; p++) {
      const at = (p - 1 - start) * vocab;
      out.push(tokenLogprob(logits.subarray(at, at + vocab), prompt[p]!, top));
    }
    scored = end;
    start = end + 1 - context / 2;
    if (opts.signal?.aborted) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

/** The most prompt bytes one call may have scored (about 9 s of work on one core at 11,000 bytes/s). */
export const MAX_SCORED_PROMPT_BYTES = 100_000;

/** InvalidArgument naming `prompt` when the last turn is too long to score in one call. */
function checkScoredPrompt(messages: readonly ChatMessage[]): void {
  const bytes = encodeText(messages[messages.length - 1]?.content ?? '').length;
  if (bytes <= MAX_SCORED_PROMPT_BYTES) return;
  const message = `A prompt scored with echo and logprobs may be at most ${MAX_SCORED_PROMPT_BYTES.toLocaleString('en-US')} bytes; this one is ${bytes.toLocaleString('en-US')}.`;
  throw new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, message, {
    fieldErrors: [{ field: 'prompt', message }],
  });
}

/** The largest bias OpenAI's `logit_bias` takes, either way. */
export const MAX_LOGIT_BIAS = 100;

/**
 * `logit_bias` as one bias per token id of a `vocab`-token model, or null when it biases nothing. Throws
 * InvalidArgument naming `logit_bias` for an id outside the vocabulary or a bias outside −100…100, in OpenAI's words.
 */
export function logitBiasOf(bias: Readonly<Record<number, number>> | undefined, vocab: number): Float32Array | null {
  const entries = Object.entries(bias ?? {});
  if (!entries.length) return null;
  const out = new Float32Array(vocab);
  for (const [key, value] of entries) {
    const id = Number(key);
    if (!Number.isInteger(id) || id < 0 || id >= vocab)
      throw invalidBias(`Invalid key in 'logit_bias': ${key}. Maximum value is ${vocab - 1}: ${TOKEN_IDS}.`);
    if (!(Math.abs(value) <= MAX_LOGIT_BIAS))
      throw invalidBias(`Invalid value in 'logit_bias' for ${key}: ${value}. Biases run from -100 to 100.`);
    out[id] = value;
  }
  return out;
}

const TOKEN_IDS = `this model's tokens are the bytes 0–255, then <|system|> ${SYSTEM}, <|user|> ${USER}, <|assistant|> ${ASSISTANT}, <|end|> ${END}`;

const invalidBias = (message: string) =>
  new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, message, {
    fieldErrors: [{ field: 'logit_bias', message }],
  });

/**
 * The logits with OpenAI's frequency and presence penalties for the tokens generated so far (`counts[id]` times
 * each), then `bias` (per token id) added: `logit − count × frequency − (count > 0) × presence + bias`. The same
 * array when the penalties are 0 and there is no bias.
 */
export function penalize(
  logits: Float32Array,
  counts: Uint32Array,
  frequency: number,
  presence: number,
  bias: Float32Array | null = null,
): Float32Array {
  if (!frequency && !presence && !bias) return logits;
  const out = Float32Array.from(logits);
  if (frequency || presence)
    for (let i = 0; i < out.length; i++) if (counts[i]) out[i] = out[i]! - counts[i]! * frequency - presence;
  if (bias) for (let i = 0; i < out.length; i++) out[i] = out[i]! + bias[i]!;
  return out;
}

/** Samples a token from logits with temperature, top-k (0: every token) and top-p. */
export function sampleToken(logits: Float32Array, temperature: number, topP: number, rng: Rng, topK = 0): number {
  if (temperature <= 0) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    return best;
  }
  const p = new Float32Array(logits.length);
  for (let i = 0; i < p.length; i++) p[i] = logits[i]! / temperature;
  softmaxInPlace(p, 0, p.length);
  const order = Array.from(p.keys()).sort((a, b) => p[b]! - p[a]! || a - b);
  const limit = topK > 0 ? Math.min(topK, order.length) : order.length;
  let keep = limit;
  let mass = 0;
  for (let k = 0; k < limit; k++) {
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
export function loadDecoder(
  bundle?: Uint8Array,
  base: Pick<DecoderBase, 'config' | 'weights'> = loadDecoderBase(),
): Decoder & { weights: Weights; adapter: LoraAdapter | null } {
  const { config } = base;
  const decoded = bundle ? decodeAdapterBundle(bundle) : null;
  const adapter = decoded?.adapter ?? null;
  const merged = adapter ? mergeAdapter(config, base.weights, adapter) : base.weights;
  const identity = identityOf(config, merged);

  function generate(messages: readonly ChatMessage[], opts: GenerateOptions = {}): GenerateStream {
    const breakpoints = opts.cache_breakpoints ?? [];
    if (breakpoints.length > MAX_CACHE_BREAKPOINTS)
      throw new AppError(
        'InvalidArgument',
        Reasons.VALIDATION_FAILED,
        `At most ${MAX_CACHE_BREAKPOINTS} cache breakpoints per call; got ${breakpoints.length}.`,
      );
    const bias = logitBiasOf(opts.logit_bias, config.vocab);
    if (opts.prompt_logprobs && opts.logprobs !== undefined) checkScoredPrompt(messages);
    let finish: 'stop' | 'length' | null = null;
    let matched: string | null = null;
    let usage: CacheUsage = { readTokens: 0, writeTokens: 0 };
    const iterable = {
      finishReason: () => finish,
      stopSequence: () => matched,
      cacheUsage: () => usage,
      async *[Symbol.asyncIterator](): AsyncGenerator<GenerateChunk> {
        const { temperature = 1, top_p = 1, max_tokens = 128, stop = [], seed = 0, prefix_cache: cache } = opts;
        const { top_k = 0, frequency_penalty = 0, presence_penalty = 0 } = opts;
        const counts = new Uint32Array(config.vocab);
        const rng = new Rng(seed);
        // Keep the most recent context: the system turn is dropped before the reply's own tokens.
        let prompt = encodePrompt(messages);
        const budget = Math.max(1, config.context - Math.min(max_tokens, config.context / 2));
        const scorePrompt = opts.prompt_logprobs && opts.logprobs !== undefined;
        if (scorePrompt) yield { text: '', prompt_logprobs: await lastTurnLogprobs(config, merged, messages, opts) };
        // A shortened prompt no longer starts at the conversation's start, so no breakpoint prefix is read whole.
        const points =
          cache && !scorePrompt && prompt.length <= budget
            ? cachePoints(messages, breakpoints, cache, prompt.length)
            : [];
        if (prompt.length > budget) prompt = prompt.slice(prompt.length - budget);
        const history = [...prompt];
        const hit = points.length ? cache!.find(identity, prompt, points) : undefined;
        let state = hit ? DecoderState.restore(config, merged, hit.state) : new DecoderState(config, merged);
        const read = hit ? points.find((p) => p.tokens === hit.tokens)!.contentBytes : 0;
        let written = read;
        let logits: Float32Array = new Float32Array(0);
        for (let i = state.length; i < prompt.length; i++) {
          logits = state.step(prompt[i]!);
          const point = points.find((p) => p.tokens === state.length);
          if (point && cache!.store(identity, prompt, state.snapshot(), point.ttlSeconds)) written = point.contentBytes;
        }
        usage = { readTokens: read, writeTokens: written - read };
        const decoder = new TextDecoder('utf-8');
        const marks = opts.logprobs === undefined ? null : new LogprobQueue();
        const piece = (from: number, to: number, last = false): GenerateChunk => ({
          text: text.slice(from, to),
          ...(marks ? { logprobs: last ? marks.rest() : marks.take(to) } : {}),
        });
        let text = '';
        let emitted = 0;
        const holdBack = Math.max(0, ...stop.map((s) => s.length - 1));
        for (let n = 0; n < max_tokens; n++) {
          if (opts.signal?.aborted) break;
          const scored = penalize(logits, counts, frequency_penalty, presence_penalty, bias);
          const token = sampleToken(scored, temperature, top_p, rng, top_k);
          if (token === END || token >= SYSTEM) {
            finish = 'stop';
            break;
          }
          text += decoder.decode(Uint8Array.of(token), { stream: true });
          marks?.push(tokenLogprob(logits, token, opts.logprobs ?? 0), text.length);
          const hit = stop.map((s) => (s ? text.indexOf(s) : -1)).filter((i) => i >= 0);
          if (hit.length) {
            const at = Math.min(...hit);
            // The sequence found earliest in the text (the first given, when two are found there).
            matched = stop.find((s) => s && text.indexOf(s) === at) ?? null;
            if (at > emitted) yield piece(emitted, at);
            finish = 'stop';
            return;
          }
          const safe = text.length - holdBack;
          if (safe > emitted) {
            yield piece(emitted, safe);
            emitted = safe;
          }
          counts[token]!++;
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
        if (text.length > emitted || marks?.size) yield piece(emitted, text.length, true);
      },
    };
    return iterable;
  }

  return {
    name: DECODER_BASE,
    manifest: decoded?.manifest ?? null,
    identity,
    weights: merged,
    adapter,
    generate,
    perplexity(rows) {
      const loss = chatLoss(config, merged, validateChatRows(rows, 'rows'));
      return { loss, perplexity: Math.exp(loss) };
    },
  };
}

/** Breakpoints as prompt prefixes long enough to cache, shortest first, one per distinct length. */
function cachePoints(
  messages: readonly ChatMessage[],
  breakpoints: readonly CacheBreakpoint[],
  cache: PrefixCache,
  promptLength: number,
): (CachePoint & { contentBytes: number })[] {
  const byLength = new Map<number, CachePoint & { contentBytes: number }>();
  for (const b of breakpoints) {
    const end = prefixEnd(messages, b.turn, b.chars);
    if (!end || end.tokens < cache.minPrefixTokens || end.tokens >= promptLength) continue;
    const ttl = b.ttl_seconds && b.ttl_seconds > 0 ? b.ttl_seconds : cache.defaultTtlSeconds;
    const ttlSeconds = Math.max(ttl, byLength.get(end.tokens)?.ttlSeconds ?? 0);
    byLength.set(end.tokens, { tokens: end.tokens, contentBytes: end.contentBytes, ttlSeconds });
  }
  return [...byLength.values()].sort((a, b) => a.tokens - b.tokens);
}

/** SHA-256 of the shape and every weight served, so an adapter's state is never read for another's. */
function identityOf(config: DecoderConfig, weights: Weights): string {
  const hash = createHash('sha256').update(JSON.stringify(config));
  for (const name of Object.keys(weights).sort()) {
    const data = weights[name]!.data;
    hash.update(name).update(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  return `${DECODER_BASE}/${hash.digest('hex').slice(0, 32)}`;
}
