/**
 * Token log probabilities of a generated reply, as OpenAI's `logprobs` report
 * them: each token's natural log probability under the model (the raw logits'
 * softmax, before temperature and top-p), with the most likely tokens at its
 * place. The decoder's tokens are bytes: one that is a whole character (ASCII)
 * is written as that character, a byte of a longer UTF-8 character as
 * `bytes:\xNN` (OpenAI's notation for a token that is not whole UTF-8), and the
 * chat markers by name with no bytes.
 */
import { END, SYSTEM } from './tokenizer';

/** The most log probabilities at one place a caller may ask for (OpenAI's `top_logprobs` bound). */
export const MAX_TOP_LOGPROBS = 20;

export interface TopLogprob {
  token: string;
  bytes: number[];
  logprob: number;
}

export interface TokenLogprob extends TopLogprob {
  /** The most likely tokens at this place, most likely first. */
  top: TopLogprob[];
}

const MARKERS = ['<|system|>', '<|user|>', '<|assistant|>', '<|end|>'];

/** A token id as OpenAI writes a token: its text and bytes. */
export function tokenOf(id: number): { token: string; bytes: number[] } {
  if (id >= SYSTEM && id <= END) return { token: MARKERS[id - SYSTEM]!, bytes: [] };
  if (id < 0x80) return { token: String.fromCharCode(id), bytes: [id] };
  return { token: `bytes:\\x${id.toString(16).padStart(2, '0')}`, bytes: [id] };
}

/** The chosen token's log probability and the `top` most likely tokens at its place, from the raw logits. */
export function tokenLogprob(logits: Float32Array, chosen: number, top: number): TokenLogprob {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  const logZ = max + Math.log(sum);
  const logprob = (id: number) => logits[id]! - logZ;
  return {
    ...tokenOf(chosen),
    logprob: logprob(chosen),
    top: topIds(logits, Math.min(top, MAX_TOP_LOGPROBS)).map((id) => ({ ...tokenOf(id), logprob: logprob(id) })),
  };
}

/** The ids of the `k` largest logits, largest first (ties: the lower id first), by insertion into a short list. */
function topIds(logits: Float32Array, k: number): number[] {
  const ids: number[] = [];
  if (k <= 0) return ids;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (ids.length === k && v <= logits[ids[k - 1]!]!) continue;
    let at = ids.length;
    while (at > 0 && logits[ids[at - 1]!]! < v) at--;
    ids.splice(at, 0, i);
    if (ids.length > k) ids.pop();
  }
  return ids;
}

/**
 * Keeps each generated token's log probability until the text it produced is
 * sent: a token ends at the reply's UTF-16 length once its character is whole,
 * so the bytes of a longer character go out with the piece that holds it.
 */
export class LogprobQueue {
  private readonly ready: { entry: TokenLogprob; end: number }[] = [];
  private pending: TokenLogprob[] = [];
  private length = 0;

  /** A token whose decoding left the reply `textLength` long (unchanged: a byte of an unfinished character). */
  push(entry: TokenLogprob, textLength: number): void {
    this.pending.push(entry);
    if (textLength === this.length) return;
    this.length = textLength;
    for (const e of this.pending) this.ready.push({ entry: e, end: textLength });
    this.pending = [];
  }

  /** The tokens whose text lies within the reply's first `textLength` UTF-16 units, in order, removed. */
  take(textLength: number): TokenLogprob[] {
    let n = 0;
    while (n < this.ready.length && this.ready[n]!.end <= textLength) n++;
    return this.ready.splice(0, n).map((r) => r.entry);
  }

  /** Tokens not yet taken. */
  get size(): number {
    return this.ready.length + this.pending.length;
  }

  /** Every token left, unfinished characters included (the reply has ended). */
  rest(): TokenLogprob[] {
    const out = [...this.ready.map((r) => r.entry), ...this.pending];
    this.ready.length = 0;
    this.pending = [];
    return out;
  }
}
