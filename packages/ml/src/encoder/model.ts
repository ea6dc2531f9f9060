import type { Embeddings } from '../assets/load';
import {
  add,
  addBias,
  chainMarginals,
  chainNll,
  chainViterbi,
  concatCols,
  crossEntropy,
  type ChainKinds,
  dropout,
  embedding,
  embeddingBag,
  gelu,
  layerNorm,
  loraLinear,
  matmul,
  matmulBT,
  matmulInto,
  randn,
  Rng,
  scale,
  selfAttention,
  sliceRows,
  Tensor,
  tensor,
  window,
  zeros,
} from '../nn';
import { denseWidth, HASHED_PER_TOKEN, labelVector, type Featurized } from './features';

/**
 * `whetstone-extract-base`'s encoder: per-token GloVe, shape flags and a
 * trainable hashed feature bag, a width-3 window projected to D, pre-LN
 * transformer layers with bidirectional attention, and an entity head that
 * takes the label names as input (BIO scores are dot products between token
 * states and vectors computed from each label name's words), so one set of
 * weights serves any schema. A relation head scores ordered pairs of entity
 * spans against vectors computed from each relation's name in the same way.
 */
export interface EncoderConfig {
  dim: number;
  layers: number;
  heads: number;
  ff: number;
  hashLog2: number;
  hashDim: number;
  /** Longer texts are encoded in chunks of this many tokens. */
  maxTokens: number;
}

export const ENCODER_CONFIG: EncoderConfig = {
  dim: 128,
  layers: 2,
  heads: 4,
  ff: 256,
  hashLog2: 15,
  hashDim: 64,
  maxTokens: 96,
};

export const WINDOW = [-1, 0, 1] as const;
export const LORA_TARGETS = ['in', 'qkv', 'o', 'fc1', 'fc2', 'hash'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

export type Weights = Record<string, Tensor>;

export interface LoraAdapter {
  rank: number;
  alpha: number;
  targets: LoraTarget[];
  /** `<linear>.A` [in, rank] and `<linear>.B` [rank, out]; `hash.A` [V, rank], `hash.B` [rank, hashDim]. */
  tensors: Weights;
}

/** Linear layers of the body: name → [in, out]. */
export function linearShapes(config: EncoderConfig, glove: Embeddings): Record<string, [number, number]> {
  const d = config.dim;
  const shapes: Record<string, [number, number]> = { in: [WINDOW.length * (denseWidth(glove) + config.hashDim), d] };
  for (let l = 0; l < config.layers; l++) {
    shapes[`l${l}.qkv`] = [d, 3 * d];
    shapes[`l${l}.o`] = [d, d];
    shapes[`l${l}.fc1`] = [d, config.ff];
    shapes[`l${l}.fc2`] = [config.ff, d];
  }
  return shapes;
}

/** Seeded initialisation of the body and the label-name head. */
export function initWeights(config: EncoderConfig, glove: Embeddings, seed: number): Weights {
  const rng = new Rng(seed);
  const w: Weights = {};
  const p = (name: string, shape: number[], std: number | 'ones' | 'zeros'): void => {
    const n = shape.reduce((a, b) => a * b, 1);
    w[name] = tensor(
      std === 'ones' ? new Float32Array(n).fill(1) : std === 'zeros' ? new Float32Array(n) : randn(rng, n, std),
      shape,
    );
  };
  p('hash', [1 << config.hashLog2, config.hashDim], 0.1);
  for (const [name, [i, o]] of Object.entries(linearShapes(config, glove))) {
    const residual = name.endsWith('.o') || name.endsWith('.fc2');
    p(`${name}.w`, [i, o], (residual ? 0.5 : 1) / Math.sqrt(i));
    p(`${name}.b`, [o], 'zeros');
  }
  for (let l = 0; l < config.layers; l++)
    for (const ln of ['ln1', 'ln2']) {
      p(`l${l}.${ln}.g`, [config.dim], 'ones');
      p(`l${l}.${ln}.b`, [config.dim], 'zeros');
    }
  p('lnf.g', [config.dim], 'ones');
  p('lnf.b', [config.dim], 'zeros');
  p('ent.o.w', [config.dim, 1], 0.02);
  p('ent.o.b', [1], 'zeros');
  for (const k of ['B', 'I']) {
    p(`ent.${k}.w`, [glove.dim, config.dim], 1 / Math.sqrt(glove.dim));
    p(`ent.${k}.b`, [config.dim], 'zeros');
  }
  return { ...w, ...initRelationHead(config, glove, seed), ...initClassHead(config, glove, seed), ...initChain() };
}

/** The BIO chain's transition scores, one per kind of step (zeros: the emissions alone decide until training says otherwise). */
export function initChain(): Weights {
  return { 'crf.trans': zeros([BIO_TRANSITION_KINDS]) };
}

/**
 * The classification head's weights (label-name projection), from their own
 * generator: bases pretrained before the head existed get them seeded on load.
 */
export function initClassHead(config: EncoderConfig, glove: Embeddings, seed: number): Weights {
  const rng = new Rng((seed ^ 0xc1a55) >>> 0);
  return {
    'cls.L.w': tensor(randn(rng, glove.dim * config.dim, 1 / Math.sqrt(glove.dim)), [glove.dim, config.dim]),
    'cls.L.b': zeros([config.dim]),
  };
}

/**
 * The relation head's weights, from their own generator: bases pretrained
 * before the head existed get them seeded on load, and the body's
 * initialisation is unchanged.
 */
export function initRelationHead(config: EncoderConfig, glove: Embeddings, seed: number): Weights {
  const rng = new Rng((seed ^ 0x5e1a7) >>> 0);
  const d = config.dim;
  const pairIn = 3 * d + 1;
  return {
    'rel.pair.w': tensor(randn(rng, pairIn * d, 1 / Math.sqrt(pairIn)), [pairIn, d]),
    'rel.pair.b': zeros([d]),
    'rel.o.w': tensor(randn(rng, d, 0.02), [d, 1]),
    'rel.o.b': zeros([1]),
    'rel.L.w': tensor(randn(rng, glove.dim * d, 1 / Math.sqrt(glove.dim)), [glove.dim, d]),
    'rel.L.b': zeros([d]),
  };
}

/** Names of the weights trained with the adapter in LoRA mode: the entity and relation heads and the norms. */
export function isHeadOrNorm(name: string): boolean {
  return (
    name.startsWith('ent.') ||
    name.startsWith('crf.') ||
    name.startsWith('label.') ||
    name.startsWith('rel.') ||
    name.startsWith('cls.') ||
    name.includes('.ln') ||
    name.startsWith('lnf.')
  );
}

/** A fresh adapter: A seeded normal, B zero, so it starts as the base. */
export function initAdapter(
  config: EncoderConfig,
  glove: Embeddings,
  rank: number,
  alpha: number,
  seed: number,
): LoraAdapter {
  const rng = new Rng(seed);
  const tensors: Weights = {};
  for (const [name, [i, o]] of Object.entries(linearShapes(config, glove))) {
    tensors[`${name}.A`] = tensor(randn(rng, i * rank, 1 / Math.sqrt(i)), [i, rank]);
    tensors[`${name}.B`] = tensor(new Float32Array(rank * o), [rank, o]);
  }
  tensors['hash.A'] = tensor(randn(rng, (1 << config.hashLog2) * rank, 1), [1 << config.hashLog2, rank]);
  tensors['hash.B'] = tensor(new Float32Array(rank * config.hashDim), [rank, config.hashDim]);
  return { rank, alpha, targets: [...LORA_TARGETS], tensors };
}

/** Base weights with `W + (alpha/rank)·A·B` folded into every adapted matrix: serves with no LoRA cost. */
export function mergeAdapter(base: Weights, adapter: LoraAdapter): Weights {
  const merged: Weights = { ...base };
  const s = adapter.alpha / adapter.rank;
  for (const key of Object.keys(adapter.tensors)) {
    if (!key.endsWith('.A')) continue;
    const name = key.slice(0, -2);
    const A = adapter.tensors[key]!;
    const B = adapter.tensors[`${name}.B`]!;
    const W = base[name === 'hash' ? 'hash' : `${name}.w`]!;
    const [i, o] = [A.rows, B.cols];
    const delta = new Float32Array(i * o);
    matmulInto(delta, A.data, B.data, i, adapter.rank, o);
    const data = new Float32Array(i * o);
    for (let k = 0; k < data.length; k++) data[k] = W.data[k]! + s * delta[k]!;
    merged[name === 'hash' ? 'hash' : `${name}.w`] = tensor(data, [i, o]);
  }
  return merged;
}

/** A padded batch of featurised chunks. */
export interface EncoderBatch {
  size: number;
  time: number;
  lengths: Int32Array;
  dense: Tensor;
  hashIds: Int32Array;
  hashOffsets: Int32Array;
}

/** Pads chunks to the longest; `dropHashed` (a rate and an rng) blanks hashed features at random while training. */
export function makeBatch(
  chunks: readonly Featurized[],
  glove: Embeddings,
  drop?: { rate: number; rng: Rng },
): EncoderBatch {
  const time = Math.max(1, ...chunks.map((c) => c.tokens.length));
  const width = denseWidth(glove);
  const dense = new Float32Array(chunks.length * time * width);
  const ids: number[] = [];
  const offsets = new Int32Array(chunks.length * time + 1);
  const lengths = new Int32Array(chunks.length);
  chunks.forEach((c, b) => {
    lengths[b] = c.tokens.length;
    dense.set(c.dense, b * time * width);
    for (let t = 0; t < time; t++) {
      const row = b * time + t;
      if (t < c.tokens.length) {
        for (let k = 0; k < HASHED_PER_TOKEN; k++) {
          const id = c.hashed[t * HASHED_PER_TOKEN + k]!;
          if (id < 0 || (drop && drop.rng.next() < drop.rate)) continue;
          ids.push(id);
        }
      }
      offsets[row + 1] = ids.length;
    }
  });
  return {
    size: chunks.length,
    time,
    lengths,
    dense: tensor(dense, [chunks.length * time, width]),
    hashIds: Int32Array.from(ids),
    hashOffsets: offsets,
  };
}

/** Dropout while training: a rate and the seeded generator of the masks. */
export interface Regularize {
  rate: number;
  rng: Rng;
}

/** Token states [B·T, D]. */
export function encode(
  config: EncoderConfig,
  w: Weights,
  batch: EncoderBatch,
  adapter?: LoraAdapter,
  reg?: Regularize,
): Tensor {
  const drop = (x: Tensor): Tensor => (reg ? dropout(x, reg.rate, reg.rng) : x);
  const s = adapter ? adapter.alpha / adapter.rank : 0;
  const linear = (x: Tensor, name: string): Tensor => {
    const A = adapter?.tensors[`${name}.A`];
    const y = A ? loraLinear(x, w[`${name}.w`]!, A, adapter!.tensors[`${name}.B`]!, s) : matmul(x, w[`${name}.w`]!);
    return addBias(y, w[`${name}.b`]!);
  };
  let bag = embeddingBag(w.hash!, batch.hashIds, batch.hashOffsets);
  const hashA = adapter?.tensors['hash.A'];
  if (hashA)
    bag = add(
      bag,
      scale(matmul(embeddingBag(hashA, batch.hashIds, batch.hashOffsets), adapter!.tensors['hash.B']!), s),
    );
  let x = drop(linear(window(concatCols([batch.dense, bag]), batch.time, WINDOW), 'in'));
  for (let l = 0; l < config.layers; l++) {
    const h = layerNorm(x, w[`l${l}.ln1.g`]!, w[`l${l}.ln1.b`]!);
    x = add(
      x,
      drop(
        linear(selfAttention(linear(h, `l${l}.qkv`), batch.size, batch.time, config.heads, batch.lengths), `l${l}.o`),
      ),
    );
    const h2 = layerNorm(x, w[`l${l}.ln2.g`]!, w[`l${l}.ln2.b`]!);
    x = add(x, drop(linear(gelu(linear(h2, `l${l}.fc1`)), `l${l}.fc2`)));
  }
  return layerNorm(x, w['lnf.g']!, w['lnf.b']!);
}

/** The label-name inputs of the entity head: GloVe of each name [L, 100], and which trained residual rows apply. */
export function labelInputs(labels: readonly string[], glove: Embeddings): Tensor {
  const g = new Float32Array(labels.length * glove.dim);
  labels.forEach((l, i) => g.set(labelVector(l, glove), i * glove.dim));
  return tensor(g, [labels.length, glove.dim]);
}

/** Label vectors plus, for labels seen in training, their rows of a learned residual table (by trained index). */
function withResidual(
  u: Tensor,
  residual: Tensor | undefined,
  labels: readonly string[],
  trained: readonly string[],
): Tensor {
  if (!residual || !trained.length) return u;
  const pick = new Float32Array(labels.length * trained.length);
  labels.forEach((l, i) => {
    const j = trained.indexOf(l);
    if (j >= 0) pick[i * trained.length + j] = 1;
  });
  if (residual.cols !== u.cols) throw new Error('label residual width');
  return add(u, matmul(tensor(pick, [labels.length, trained.length]), residual));
}

/**
 * Tag logits [B·T, 1 + 2L]: O, then B-label for each label, then I-label. A
 * label's vectors are a projection of its name plus, for labels seen in
 * training, a learned residual (`label.B`/`label.I` rows by trained index).
 */
export function entityLogits(
  w: Weights,
  states: Tensor,
  labels: readonly string[],
  glove: Embeddings,
  trained: readonly string[],
): Tensor {
  const G = labelInputs(labels, glove);
  const vectors = (k: 'B' | 'I'): Tensor =>
    withResidual(addBias(matmul(G, w[`ent.${k}.w`]!), w[`ent.${k}.b`]!), w[`label.${k}`], labels, trained);
  return concatCols([
    addBias(matmul(states, w['ent.o.w']!), w['ent.o.b']!),
    matmulBT(states, vectors('B')),
    matmulBT(states, vectors('I')),
  ]);
}

/** At most this many entity spans of one chunk take part in relations (pairs grow as its square). */
export const MAX_RELATION_SPANS = 24;

/** An entity span as a token range of one chunk of a batch (`first`..`last` inclusive). */
export interface TokenSpan {
  chunk: number;
  first: number;
  last: number;
}

/** Ordered pairs of a batch's spans: indices into `spans`, head and tail (both from one chunk). */
export interface SpanPairs {
  spans: readonly TokenSpan[];
  heads: Int32Array;
  tails: Int32Array;
}

/** Tokens of a chunk covered by a character span, or null when none is. */
export function tokenRange(
  chunk: Featurized,
  span: { start: number; end: number },
): { first: number; last: number } | null {
  let first = -1;
  let last = -1;
  chunk.tokens.forEach((tok, i) => {
    if (tok.start < span.end && tok.end > span.start) {
      if (first < 0) first = i;
      last = i;
    }
  });
  return first < 0 ? null : { first, last };
}

/**
 * Relation logits [P, 1 + R] for ordered span pairs: `none`, then each
 * relation. A span is the mean of its token states; a pair is
 * [head, tail, mean of the tokens between them, ±1 for which comes first]
 * through a linear layer and GELU, scored against each relation's vector (a
 * projection of its name's GloVe plus, for trained relations, a learned
 * residual `rel.label`).
 */
export function relationLogits(
  w: Weights,
  states: Tensor,
  time: number,
  pairs: SpanPairs,
  relations: readonly string[],
  glove: Embeddings,
  trained: readonly string[],
): Tensor {
  const rowsOf = (chunk: number, from: number, to: number, ids: number[]) => {
    for (let t = from; t <= to; t++) ids.push(chunk * time + t);
  };
  const spanIds: number[] = [];
  const spanOffsets = new Int32Array(pairs.spans.length + 1);
  pairs.spans.forEach((s, k) => {
    rowsOf(s.chunk, s.first, s.last, spanIds);
    spanOffsets[k + 1] = spanIds.length;
  });
  const spanStates = embeddingBag(states, Int32Array.from(spanIds), spanOffsets);
  const P = pairs.heads.length;
  const betweenIds: number[] = [];
  const betweenOffsets = new Int32Array(P + 1);
  const order = new Float32Array(P);
  for (let p = 0; p < P; p++) {
    const h = pairs.spans[pairs.heads[p]!]!;
    const t = pairs.spans[pairs.tails[p]!]!;
    order[p] = h.first <= t.first ? 1 : -1;
    rowsOf(h.chunk, Math.min(h.last, t.last) + 1, Math.max(h.first, t.first) - 1, betweenIds);
    betweenOffsets[p + 1] = betweenIds.length;
  }
  const between = embeddingBag(states, Int32Array.from(betweenIds), betweenOffsets);
  const input = concatCols([
    embedding(spanStates, pairs.heads),
    embedding(spanStates, pairs.tails),
    between,
    tensor(order, [P, 1]),
  ]);
  const pair = gelu(addBias(matmul(input, w['rel.pair.w']!), w['rel.pair.b']!));
  const vectors = withResidual(
    addBias(matmul(labelInputs(relations, glove), w['rel.L.w']!), w['rel.L.b']!),
    w['rel.label'],
    relations,
    trained,
  );
  return concatCols([addBias(matmul(pair, w['rel.o.w']!), w['rel.o.b']!), matmulBT(pair, vectors)]);
}

/** Tag ids over `1 + 2L` classes from gold spans (a token inside a span is B on its first token, I after). */
export function goldTags(
  chunk: Featurized,
  spans: readonly { start: number; end: number; label: string }[],
  labels: readonly string[],
): Int32Array {
  const L = labels.length;
  const tags = new Int32Array(chunk.tokens.length);
  chunk.tokens.forEach((tok, i) => {
    const span = spans.find((e) => tok.start < e.end && tok.end > e.start);
    const li = span ? labels.indexOf(span.label) : -1;
    if (!span || li < 0) return;
    const first = i === 0 || !(chunk.tokens[i - 1]!.start < span.end && chunk.tokens[i - 1]!.end > span.start);
    tags[i] = first ? 1 + li : 1 + L + li;
  });
  return tags;
}

/**
 * The tag loss of a batch per token: the BIO chain CRF's negative
 * log-likelihood of each text's gold path (padding excluded). With
 * `perExample` labels (pretraining), each text is scored against its own
 * label names.
 */
export function entityLoss(
  config: EncoderConfig,
  w: Weights,
  batch: EncoderBatch,
  tags: readonly Int32Array[],
  labels: readonly string[],
  glove: Embeddings,
  adapter?: LoraAdapter,
  reg?: Regularize,
  perExample?: readonly (readonly string[])[],
): Tensor {
  return tagLoss(w, encode(config, w, batch, adapter, reg), batch, tags, labels, glove, perExample);
}

/** {@link entityLoss} on token states already encoded (the relation loss shares them). */
export function tagLoss(
  w: Weights,
  states: Tensor,
  batch: EncoderBatch,
  tags: readonly Int32Array[],
  labels: readonly string[],
  glove: Embeddings,
  perExample?: readonly (readonly string[])[],
): Tensor {
  const trans = w['crf.trans'];
  if (!trans) throw new Error('the encoder weights have no CRF transitions (crf.trans)');
  const tokens = tags.reduce((n, t) => n + t.length, 0);
  // One text's loss over L labels, per token of the batch.
  const textLoss = (logits: Tensor, t: Int32Array, L: number): Tensor =>
    scale(chainNll(logits, trans, bioChain(L), repairBio(t, L)), 1 / tokens);
  const rowsOf = (x: Tensor, b: number) => sliceRows(x, b * batch.time, b * batch.time + tags[b]!.length);
  const logits = perExample ? null : entityLogits(w, states, labels, glove, labels);
  const parts = tags.map((t, b) =>
    perExample
      ? textLoss(entityLogits(w, rowsOf(states, b), perExample[b]!, glove, []), t, perExample[b]!.length)
      : textLoss(rowsOf(logits!, b), t, labels.length),
  );
  return parts.reduce((a, b) => add(a, b));
}

/** Kinds of BIO steps, shared by every label: O→O, O→B, B→O, B→B same, B→B other, B→I, I→O, I→B same, I→B other, I→I, start O, start B. */
export const BIO_TRANSITION_KINDS = 12;

const chains = new Map<number, ChainKinds>();

/** The BIO chain over O, B-1..B-L, I-1..I-L: I-x only after B-x or I-x, and never first. */
export function bioChain(L: number): ChainKinds {
  let chain = chains.get(L);
  if (chain) return chain;
  const C = 1 + 2 * L;
  const kinds = new Int32Array(C * C + C).fill(-1);
  const type = (c: number) => (c === 0 ? 'O' : c <= L ? 'B' : 'I');
  const label = (c: number) => (c - 1) % L;
  for (let p = 0; p < C; p++)
    for (let c = 0; c < C; c++) {
      const same = p > 0 && c > 0 && label(p) === label(c);
      const step = `${type(p)}${type(c)}`;
      const kind = {
        OO: 0,
        OB: 1,
        BO: 2,
        BB: same ? 3 : 4,
        BI: same ? 5 : -1,
        IO: 6,
        IB: same ? 7 : 8,
        II: same ? 9 : -1,
        OI: -1,
      }[step]!;
      kinds[p * C + c] = kind;
    }
  for (let c = 0; c < C; c++) kinds[C * C + c] = c === 0 ? 10 : c <= L ? 11 : -1;
  chain = { classes: C, kinds };
  chains.set(L, chain);
  return chain;
}

/** Gold tags made a legal BIO path: an I-x that does not continue x (a chunk cut inside a span) becomes B-x. */
function repairBio(tags: Int32Array, L: number): Int32Array {
  const out = tags.slice();
  for (let t = 0; t < out.length; t++) {
    const c = out[t]!;
    if (c > L && (t === 0 || (out[t - 1] !== c && out[t - 1] !== c - L))) out[t] = c - L;
  }
  return out;
}

export interface DecodedSpan {
  start: number;
  end: number;
  label: string;
  confidence: number;
}

/**
 * The CRF's best BIO path (I-x may only follow B-x or I-x) under transition
 * scores `trans`, then spans with the mean forward–backward marginal of their
 * tags as confidence.
 */
export function decodeSpans(
  logits: Float32Array,
  rowOffset: number,
  chunk: Featurized,
  labels: readonly string[],
  trans: Float32Array,
): DecodedSpan[] {
  const L = labels.length;
  const C = 1 + 2 * L;
  const T = chunk.tokens.length;
  if (!T) return [];
  const emissions = logits.slice(rowOffset * C, (rowOffset + T) * C);
  const chain = bioChain(L);
  return spansOf(
    chainViterbi(emissions, T, chain, trans),
    chainMarginals(emissions, T, chain, trans, false).marginals,
    chunk,
    labels,
  );
}

/** Spans of a BIO path, each with the mean probability of its tags as confidence. */
function spansOf(
  path: Int32Array,
  probs: ArrayLike<number>,
  chunk: Featurized,
  labels: readonly string[],
): DecodedSpan[] {
  const L = labels.length;
  const C = 1 + 2 * L;
  const T = path.length;
  const spans: DecodedSpan[] = [];
  for (let t = 0; t < T; t++) {
    const c = path[t]!;
    if (c === 0 || c > L) continue;
    let end = t;
    let sum = probs[t * C + c]!;
    while (end + 1 < T && path[end + 1] === c + L) {
      end++;
      sum += probs[end * C + c + L]!;
    }
    spans.push({
      start: chunk.tokens[t]!.start,
      end: chunk.tokens[end]!.end,
      label: labels[c - 1]!,
      confidence: sum / (end - t + 1),
    });
  }
  return spans;
}

/** Each text's mean token state [B, D] (a constant pooling matrix, so the gradient reaches every token). */
export function poolStates(states: Tensor, batch: EncoderBatch): Tensor {
  const R = batch.size * batch.time;
  const P = new Float32Array(batch.size * R);
  for (let b = 0; b < batch.size; b++) {
    const n = Math.max(1, batch.lengths[b]!);
    for (let t = 0; t < batch.lengths[b]!; t++) P[b * R + b * batch.time + t] = 1 / n;
  }
  return matmul(tensor(P, [batch.size, R]), states);
}

/** The residual weights of a classification task's trained labels. */
export const classResidualName = (task: string) => `cls.task:${task}`;

/**
 * Class scores [B, L] of one task: pooled text states against vectors
 * computed from each label's name, plus the learned residual of labels this
 * task was trained with (`cls.task:<task>`, rows in `trained` order).
 */
export function classLogits(
  w: Weights,
  pooled: Tensor,
  task: string,
  labels: readonly string[],
  glove: Embeddings,
  trained: readonly string[],
): Tensor {
  const vectors = addBias(matmul(labelInputs(labels, glove), w['cls.L.w']!), w['cls.L.b']!);
  return matmulBT(pooled, withResidual(vectors, w[classResidualName(task)], labels, trained));
}

/**
 * Masked-token pretraining (`build:encoder`): the words the model is asked to restore, the `size` most frequent
 * lower-case GloVe words, and their unit vectors [size, 100], the fixed output embeddings of the prediction.
 */
export interface MaskVocabulary {
  ids: Map<string, number>;
  vectors: Tensor;
}

export function maskVocabulary(glove: Embeddings, size: number): MaskVocabulary {
  const ids = new Map<string, number>();
  const rows: Float32Array[] = [];
  for (const word of glove.words ?? []) {
    if (ids.size >= size) break;
    const v = /^[a-z]+$/.test(word) ? glove.vector(word) : null;
    if (!v) continue;
    let n = 0;
    for (let d = 0; d < v.length; d++) n += v[d]! * v[d]!;
    const unit = new Float32Array(v.length);
    for (let d = 0; d < v.length; d++) unit[d] = v[d]! / Math.sqrt(n || 1);
    ids.set(word, rows.length);
    rows.push(unit);
  }
  const vectors = new Float32Array(rows.length * glove.dim);
  rows.forEach((r, i) => vectors.set(r, i * glove.dim));
  return { ids, vectors: tensor(vectors, [rows.length, glove.dim]) };
}

/** The masked-token head's weights: token state [D] → a vector in GloVe's space [100]. */
export function initMaskHead(config: EncoderConfig, glove: Embeddings, seed: number): Weights {
  return {
    'mlm.w': tensor(randn(new Rng(seed ^ 0x6d6c6d), config.dim * glove.dim, 1 / Math.sqrt(config.dim)), [
      config.dim,
      glove.dim,
    ]),
    'mlm.b': zeros([glove.dim]),
  };
}

/**
 * Masks a share of a batch's in-vocabulary words in place: each chosen token's dense inputs (GloVe, shape and
 * gazetteer flags) become zeros and its hashed features are dropped, so neither it nor its neighbours' windows
 * see it. Returns the masked rows of the batch and the words to restore.
 */
export function maskTokens(
  batch: EncoderBatch,
  chunks: readonly Featurized[],
  vocabulary: MaskVocabulary,
  rate: number,
  rng: Rng,
): { rows: Int32Array; targets: Int32Array } {
  const rows: number[] = [];
  const targets: number[] = [];
  chunks.forEach((c, b) =>
    c.tokens.forEach((t, i) => {
      const id = vocabulary.ids.get(t.text.toLowerCase());
      if (id !== undefined && rng.next() < rate) {
        rows.push(b * batch.time + i);
        targets.push(id);
      }
    }),
  );
  if (!rows.length) return { rows: new Int32Array(0), targets: new Int32Array(0) };
  const width = batch.dense.data.length / (batch.size * batch.time);
  const masked = new Set(rows);
  for (const r of rows) batch.dense.data.fill(0, r * width, (r + 1) * width);
  const ids: number[] = [];
  const offsets = new Int32Array(batch.hashOffsets.length);
  for (let r = 0; r < batch.size * batch.time; r++) {
    if (!masked.has(r))
      for (let k = batch.hashOffsets[r]!; k < batch.hashOffsets[r + 1]!; k++) ids.push(batch.hashIds[k]!);
    offsets[r + 1] = ids.length;
  }
  batch.hashIds = Int32Array.from(ids);
  batch.hashOffsets = offsets;
  return { rows: Int32Array.from(rows), targets: Int32Array.from(targets) };
}

/** The masked-token loss: cross-entropy of each masked word among the vocabulary, scored by dot product in GloVe's space. */
export function maskedTokenLoss(
  w: Weights,
  states: Tensor,
  masked: { rows: Int32Array; targets: Int32Array },
  vocabulary: MaskVocabulary,
): Tensor {
  const h = addBias(matmul(embedding(states, masked.rows), w['mlm.w']!), w['mlm.b']!);
  return crossEntropy(matmulBT(h, vocabulary.vectors), masked.targets);
}
