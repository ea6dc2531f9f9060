import type { BertModel } from '../models/bert/modeling-bert';
import { add, addBias, concatCols, embedding, gelu, matmul, matmulBT } from '../nn/ops';
import { randn, Rng } from '../nn/rng';
import { Tensor } from '../nn/tensor';
import type { WordPieceTokenizer } from '../tokenizers/tokenizer';
import { meanRows } from './losses';

/**
 * GLiNER-style label-conditioned span scoring on a BERT encoder. Words are the tokenizer's pre-tokenized words; a
 * word is its first sub-token's hidden state joined with a case/shape embedding (uncased checkpoints lose
 * capitalisation, which names need). A span (up to `maxWidth` words) is gelu(start·Ws + end·We + width)·Wo; a
 * label is its name run through the same encoder, mean-pooled and projected. The score of (span, label) is their
 * dot product: one set of weights answers any label set, and fine-tunes on new labels.
 */
export interface SpanHeadConfig {
  hidden: number;
  dim: number;
  maxWidth: number;
  shapeDim: number;
}

export const SHAPE_KINDS = 12;

/** Case/shape class of a word of the original text, and whether it starts the text: 6 shapes × 2. */
export function wordShape(word: string, first: boolean): number {
  let s: number;
  if (/^\p{Ll}+$/u.test(word)) s = 0;
  else if (/^\p{Lu}\p{Ll}+$/u.test(word)) s = 1;
  else if (/^\p{Lu}+$/u.test(word)) s = 2;
  else if (/\p{N}/u.test(word)) s = 3;
  else if (/^[\p{P}\p{S}]+$/u.test(word)) s = 4;
  else s = 5;
  return s * 2 + (first ? 1 : 0);
}

export interface SpanHeadWeights {
  shape: Tensor;
  start: Tensor;
  end: Tensor;
  width: Tensor;
  spanOut: Tensor;
  spanBias: Tensor;
  label1: Tensor;
  label1Bias: Tensor;
  label2: Tensor;
  label2Bias: Tensor;
}

export function initSpanHead(c: SpanHeadConfig, seed: number): SpanHeadWeights {
  const rng = new Rng(seed);
  const w = (rows: number, cols: number, std = 1 / Math.sqrt(rows)): Tensor =>
    new Tensor(randn(rng, rows * cols, std), [rows, cols], true);
  const z = (n: number): Tensor => new Tensor(new Float32Array(n), [n], true);
  const inp = c.hidden + c.shapeDim;
  return {
    shape: w(SHAPE_KINDS, c.shapeDim, 0.1),
    start: w(inp, c.dim),
    end: w(inp, c.dim),
    width: w(c.maxWidth, c.dim, 0.1),
    spanOut: w(c.dim, c.dim),
    spanBias: z(c.dim),
    label1: w(c.hidden, c.dim),
    label1Bias: z(c.dim),
    label2: w(c.dim, c.dim),
    label2Bias: z(c.dim),
  };
}

/** One text as the head sees it: token ids, each word's first token and character range, the word shapes. */
export interface EncodedText {
  text: string;
  ids: Int32Array;
  typeIds: Int32Array;
  /** Per word: index of its first token. */
  firstToken: number[];
  /** Per word: [start, end) in UTF-16 units of the text. */
  wordOffsets: Array<[number, number]>;
  shapes: Int32Array;
}

/** Tokenizes a text into words; texts past `maxTokens` keep their first words (callers window longer texts). */
export function encodeText(tok: WordPieceTokenizer, text: string, maxTokens = 512): EncodedText {
  const e = tok.encode(text);
  let n = e.ids.length;
  if (n > maxTokens) n = maxTokens - 1;
  const firstToken: number[] = [];
  const wordOffsets: Array<[number, number]> = [];
  let last: number | null = null;
  for (let t = 0; t < n; t++) {
    const w = e.wordIds[t];
    if (w === null || w === undefined) continue;
    if (w !== last) {
      firstToken.push(t);
      wordOffsets.push([...e.offsets[t]!]);
      last = w;
    } else wordOffsets[wordOffsets.length - 1]![1] = e.offsets[t]![1];
  }
  const ids = Int32Array.from(e.ids.subarray(0, n));
  if (n < e.ids.length) ids[n - 1] = e.ids[e.ids.length - 1]!; // keep the closing [SEP]
  const shapes = Int32Array.from(wordOffsets.map(([a, b], i) => wordShape(text.slice(a, b), i === 0)));
  return { text, ids, typeIds: new Int32Array(n), firstToken, wordOffsets, shapes };
}

export interface SpanBatch {
  /** Spans of every text, in order: text, start word, width. */
  spans: Array<{ text: number; start: number; end: number }>;
  logits: Tensor;
}

/** Runs the encoder over a batch of texts (padded) and returns the hidden state and each text's row offset. */
function encodeBatch(bert: BertModel, texts: ReadonlyArray<{ ids: Int32Array; typeIds: Int32Array }>, rng?: Rng) {
  const time = Math.max(...texts.map((t) => t.ids.length));
  const ids = new Int32Array(texts.length * time);
  const typeIds = new Int32Array(texts.length * time);
  texts.forEach((t, b) => {
    ids.set(t.ids, b * time);
    typeIds.set(t.typeIds, b * time);
  });
  const lengths = Int32Array.from(texts.map((t) => t.ids.length));
  return { hidden: bert.forward({ ids, typeIds, lengths, batch: texts.length, time }, { rng }), time };
}

/** Label vectors [labels, dim]: each name encoded alone ([CLS] name [SEP]), its tokens averaged, projected. */
export function labelVectors(
  bert: BertModel,
  tok: WordPieceTokenizer,
  w: SpanHeadWeights,
  labels: string[],
  rng?: Rng,
): Tensor {
  const encs = labels.map((l) => {
    const e = tok.encode(l.replace(/[_.]/g, ' '));
    return { ids: e.ids, typeIds: e.typeIds };
  });
  const { hidden, time } = encodeBatch(bert, encs, rng);
  const pooled = meanRows(
    hidden,
    encs.map((e, b) => [b * time + 1, b * time + Math.max(2, e.ids.length - 1)] as const),
  );
  const h = gelu(addBias(matmul(pooled, w.label1), w.label1Bias));
  return addBias(matmul(h, w.label2), w.label2Bias);
}

/** Span logits [spans, labels] for a batch of encoded texts against the given label vectors. */
export function spanLogits(
  bert: BertModel,
  w: SpanHeadWeights,
  c: SpanHeadConfig,
  texts: EncodedText[],
  labels: Tensor,
  rng?: Rng,
): SpanBatch {
  const { hidden, time } = encodeBatch(bert, texts, rng);
  const rows: number[] = [];
  const shapes: number[] = [];
  texts.forEach((t, b) => {
    for (let i = 0; i < t.firstToken.length; i++) {
      rows.push(b * time + t.firstToken[i]!);
      shapes.push(t.shapes[i]!);
    }
  });
  const words = concatCols([embedding(hidden, Int32Array.from(rows)), embedding(w.shape, Int32Array.from(shapes))]);
  const S = matmul(words, w.start);
  const E = matmul(words, w.end);
  const spans: SpanBatch['spans'] = [];
  const si: number[] = [];
  const ei: number[] = [];
  const wi: number[] = [];
  let base = 0;
  texts.forEach((t, b) => {
    const n = t.firstToken.length;
    for (let i = 0; i < n; i++)
      for (let k = 0; k < c.maxWidth && i + k < n; k++) {
        spans.push({ text: b, start: i, end: i + k });
        si.push(base + i);
        ei.push(base + i + k);
        wi.push(k);
      }
    base += n;
  });
  if (!spans.length) return { spans, logits: new Tensor(new Float32Array(0), [0, labels.rows]) };
  const pre = add(
    add(embedding(S, Int32Array.from(si)), embedding(E, Int32Array.from(ei))),
    embedding(w.width, Int32Array.from(wi)),
  );
  const rep = addBias(matmul(gelu(pre), w.spanOut), w.spanBias);
  return { spans, logits: matmulBT(rep, labels) };
}

export interface FoundSpan {
  text: number;
  start: number;
  end: number;
  label: number;
  score: number;
}

/** Flat decoding: spans whose best label's probability passes `threshold`, greedily by score, none overlapping. */
export function decodeSpans(batch: SpanBatch, labelCount: number, threshold = 0.5): FoundSpan[] {
  const found: FoundSpan[] = [];
  const z = batch.logits.data;
  batch.spans.forEach((s, i) => {
    let best = -1;
    let bestZ = -Infinity;
    for (let l = 0; l < labelCount; l++)
      if (z[i * labelCount + l]! > bestZ) {
        bestZ = z[i * labelCount + l]!;
        best = l;
      }
    const p = 1 / (1 + Math.exp(-bestZ));
    if (p >= threshold) found.push({ ...s, label: best, score: p });
  });
  found.sort((a, b) => b.score - a.score);
  const taken = new Map<number, Uint8Array>();
  const kept: FoundSpan[] = [];
  for (const f of found) {
    const used = taken.get(f.text) ?? new Uint8Array(1024);
    taken.set(f.text, used);
    let free = true;
    for (let i = f.start; i <= f.end; i++) if (used[i]) free = false;
    if (!free) continue;
    for (let i = f.start; i <= f.end; i++) used[i] = 1;
    kept.push(f);
  }
  return kept.sort((a, b) => a.text - b.text || a.start - b.start);
}

export function headParameters(w: SpanHeadWeights): Tensor[] {
  return Object.values(w);
}
