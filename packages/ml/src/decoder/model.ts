import {
  add,
  addBias,
  causalSelfAttention,
  crossEntropy,
  embedding,
  gelu,
  layerNorm,
  loraLinear,
  matmul,
  matmulInto,
  randn,
  Rng,
  softmaxInPlace,
  Tensor,
  tensor,
} from '../nn';
import { VOCAB_SIZE } from './tokenizer';

export interface DecoderConfig {
  vocab: number;
  dim: number;
  layers: number;
  heads: number;
  /** Context length in tokens. */
  context: number;
}

export const DEFAULT_CONFIG: DecoderConfig = { vocab: VOCAB_SIZE, dim: 128, layers: 3, heads: 4, context: 64 };

/** The linear layers of a block, each a LoRA target. */
export const LINEAR_MODULES = ['qkv', 'o', 'fc1', 'fc2'] as const;
export type LinearModule = (typeof LINEAR_MODULES)[number];

export type Weights = Record<string, Tensor>;

export interface LoraAdapter {
  rank: number;
  alpha: number;
  targets: LinearModule[];
  /** `l<i>.<module>.A` [in, rank] and `l<i>.<module>.B` [rank, out]. */
  tensors: Weights;
}

function linearShape(config: DecoderConfig, m: LinearModule): [number, number] {
  const d = config.dim;
  return { qkv: [d, 3 * d], o: [d, d], fc1: [d, 4 * d], fc2: [4 * d, d] }[m] as [number, number];
}

/** Seeded GPT-2-style initialisation. */
export function initWeights(config: DecoderConfig, seed: number, requiresGrad = true): Weights {
  const rng = new Rng(seed);
  const w: Weights = {};
  const d = config.dim;
  const p = (name: string, shape: number[], std: number | 'ones' | 'zeros'): void => {
    const n = shape.reduce((a, b) => a * b, 1);
    const data =
      std === 'ones' ? new Float32Array(n).fill(1) : std === 'zeros' ? new Float32Array(n) : randn(rng, n, std);
    w[name] = tensor(data, shape, requiresGrad);
  };
  p('tok', [config.vocab, d], 0.02);
  p('pos', [config.context, d], 0.01);
  for (let l = 0; l < config.layers; l++) {
    for (const ln of ['ln1', 'ln2']) {
      p(`l${l}.${ln}.g`, [d], 'ones');
      p(`l${l}.${ln}.b`, [d], 'zeros');
    }
    for (const m of LINEAR_MODULES) {
      const [i, o] = linearShape(config, m);
      const residual = m === 'o' || m === 'fc2';
      p(`l${l}.${m}.w`, [i, o], residual ? 0.02 / Math.sqrt(2 * config.layers) : 0.02);
      p(`l${l}.${m}.b`, [o], 'zeros');
    }
  }
  p('lnf.g', [d], 'ones');
  p('lnf.b', [d], 'zeros');
  p('head.w', [d, config.vocab], 0.02);
  p('head.b', [config.vocab], 'zeros');
  return w;
}

/** A fresh adapter: A seeded normal, B zero, so it starts as the identity. */
export function initAdapter(
  config: DecoderConfig,
  rank: number,
  alpha: number,
  targets: LinearModule[],
  seed: number,
): LoraAdapter {
  const rng = new Rng(seed);
  const tensors: Weights = {};
  for (let l = 0; l < config.layers; l++) {
    for (const m of targets) {
      const [i, o] = linearShape(config, m);
      tensors[`l${l}.${m}.A`] = tensor(randn(rng, i * rank, 1 / Math.sqrt(i)), [i, rank], true);
      tensors[`l${l}.${m}.B`] = tensor(new Float32Array(rank * o), [rank, o], true);
    }
  }
  return { rank, alpha, targets, tensors };
}

/** Base weights with `W + (alpha/rank)·A·B` folded in: serves with no LoRA cost. */
export function mergeAdapter(config: DecoderConfig, base: Weights, adapter: LoraAdapter): Weights {
  const merged: Weights = { ...base };
  const s = adapter.alpha / adapter.rank;
  for (let l = 0; l < config.layers; l++) {
    for (const m of adapter.targets) {
      const W = base[`l${l}.${m}.w`]!;
      const A = adapter.tensors[`l${l}.${m}.A`]!;
      const B = adapter.tensors[`l${l}.${m}.B`]!;
      const [i, o] = linearShape(config, m);
      const delta = new Float32Array(i * o);
      matmulInto(delta, A.data, B.data, i, adapter.rank, o);
      const data = new Float32Array(i * o);
      for (let k = 0; k < data.length; k++) data[k] = W.data[k]! + s * delta[k]!;
      merged[`l${l}.${m}.w`] = tensor(data, [i, o]);
    }
  }
  return merged;
}

/** Logits [B·T, vocab] for `ids` laid out as B rows of T tokens (the training path). */
export function forward(
  config: DecoderConfig,
  w: Weights,
  ids: Int32Array,
  batch: number,
  time: number,
  adapter?: LoraAdapter,
): Tensor {
  const positions = new Int32Array(batch * time);
  for (let i = 0; i < positions.length; i++) positions[i] = i % time;
  const s = adapter ? adapter.alpha / adapter.rank : 0;
  const linear = (x: Tensor, name: string): Tensor => {
    const W = w[`${name}.w`]!;
    const A = adapter?.tensors[`${name}.A`];
    const y = A ? loraLinear(x, W, A, adapter!.tensors[`${name}.B`]!, s) : matmul(x, W);
    return addBias(y, w[`${name}.b`]!);
  };
  let x = add(embedding(w.tok!, ids), embedding(w.pos!, positions));
  for (let l = 0; l < config.layers; l++) {
    const h = layerNorm(x, w[`l${l}.ln1.g`]!, w[`l${l}.ln1.b`]!);
    const att = causalSelfAttention(linear(h, `l${l}.qkv`), batch, time, config.heads);
    x = add(x, linear(att, `l${l}.o`));
    const h2 = layerNorm(x, w[`l${l}.ln2.g`]!, w[`l${l}.ln2.b`]!);
    x = add(x, linear(gelu(linear(h2, `l${l}.fc1`)), `l${l}.fc2`));
  }
  return linear(layerNorm(x, w['lnf.g']!, w['lnf.b']!), 'head');
}

/** Mean cross-entropy of next-token targets, weighted per position. */
export function lossOf(config: DecoderConfig, w: Weights, batch: Batch, adapter?: LoraAdapter): Tensor {
  return crossEntropy(forward(config, w, batch.inputs, batch.size, batch.time, adapter), batch.targets, batch.weights);
}

/**
 * The loss of `lossOf` and, from the same logits, the weight of the scored positions whose highest logit is
 * the target (`hits`, the first id on a tie) out of all scored weight (`scored`): token accuracy is their ratio.
 */
export function scoredLoss(
  config: DecoderConfig,
  w: Weights,
  batch: Batch,
  adapter?: LoraAdapter,
): { loss: Tensor; hits: number; scored: number } {
  const logits = forward(config, w, batch.inputs, batch.size, batch.time, adapter);
  const V = config.vocab;
  let hits = 0;
  let scored = 0;
  for (let i = 0; i < batch.targets.length; i++) {
    const weight = batch.weights[i]!;
    if (weight === 0) continue;
    const o = i * V;
    let best = 0;
    for (let v = 1; v < V; v++) if (logits.data[o + v]! > logits.data[o + best]!) best = v;
    if (best === batch.targets[i]) hits += weight;
    scored += weight;
  }
  return { loss: crossEntropy(logits, batch.targets, batch.weights), hits, scored };
}

export interface Batch {
  size: number;
  time: number;
  inputs: Int32Array;
  targets: Int32Array;
  weights: Float32Array;
}

/** A token window: inputs, next-token targets, and a weight per target. */
export interface Window {
  inputs: number[];
  targets: number[];
  weights: number[];
}

/** Pads windows to the longest one (padding has weight 0; attention is causal, so it never leaks backwards). */
export function makeBatch(windows: readonly Window[]): Batch {
  const time = Math.max(...windows.map((w) => w.inputs.length));
  const n = windows.length * time;
  const b: Batch = {
    size: windows.length,
    time,
    inputs: new Int32Array(n),
    targets: new Int32Array(n),
    weights: new Float32Array(n),
  };
  windows.forEach((win, r) => {
    b.inputs.set(win.inputs, r * time);
    b.targets.set(win.targets, r * time);
    b.weights.set(win.weights, r * time);
  });
  return b;
}

/** The attention keys and values of a decoder's first `length` positions, per layer ([length, dim] each). */
export interface KvSnapshot {
  length: number;
  keys: Float32Array[];
  values: Float32Array[];
}

/**
 * Incremental inference with a key/value cache (generation). Uses plain
 * weights, so an adapter must be merged first.
 */
export class DecoderState {
  private readonly keys: Float32Array[];
  private readonly values: Float32Array[];
  length = 0;

  constructor(
    readonly config: DecoderConfig,
    private readonly w: Weights,
  ) {
    const { layers, context, dim } = config;
    this.keys = Array.from({ length: layers }, () => new Float32Array(context * dim));
    this.values = Array.from({ length: layers }, () => new Float32Array(context * dim));
  }

  get full(): boolean {
    return this.length >= this.config.context;
  }

  /** A copy of the keys and values of every position read so far. */
  snapshot(): KvSnapshot {
    const n = this.length * this.config.dim;
    return {
      length: this.length,
      keys: this.keys.map((k) => k.slice(0, n)),
      values: this.values.map((v) => v.slice(0, n)),
    };
  }

  /** A state that continues from `snapshot` exactly as the state it was taken from would (it is copied, not shared). */
  static restore(config: DecoderConfig, w: Weights, snapshot: KvSnapshot): DecoderState {
    if (snapshot.length > config.context || snapshot.keys.length !== config.layers)
      throw new Error('snapshot does not fit this decoder');
    const state = new DecoderState(config, w);
    snapshot.keys.forEach((k, l) => state.keys[l]!.set(k));
    snapshot.values.forEach((v, l) => state.values[l]!.set(v));
    state.length = snapshot.length;
    return state;
  }

  /** Appends one token and returns the next-token logits. */
  step(token: number): Float32Array {
    const { dim: D, heads, layers, vocab } = this.config;
    const w = this.w;
    const pos = this.length;
    if (pos >= this.config.context) throw new Error('decoder context is full');
    const x = new Float32Array(D);
    for (let d = 0; d < D; d++) x[d] = w.tok!.data[token * D + d]! + w.pos!.data[pos * D + d]!;
    const hd = D / heads;
    const scale = 1 / Math.sqrt(hd);
    const scores = new Float32Array(pos + 1);
    for (let l = 0; l < layers; l++) {
      const qkv = linearVec(
        layerNormVec(x, w[`l${l}.ln1.g`]!, w[`l${l}.ln1.b`]!),
        w[`l${l}.qkv.w`]!,
        w[`l${l}.qkv.b`]!,
      );
      this.keys[l]!.set(qkv.subarray(D, 2 * D), pos * D);
      this.values[l]!.set(qkv.subarray(2 * D, 3 * D), pos * D);
      const att = new Float32Array(D);
      for (let h = 0; h < heads; h++) {
        for (let s = 0; s <= pos; s++) {
          let dot = 0;
          for (let d = 0; d < hd; d++) dot += qkv[h * hd + d]! * this.keys[l]![s * D + h * hd + d]!;
          scores[s] = dot * scale;
        }
        softmaxInPlace(scores, 0, pos + 1);
        for (let s = 0; s <= pos; s++)
          for (let d = 0; d < hd; d++) att[h * hd + d]! += scores[s]! * this.values[l]![s * D + h * hd + d]!;
      }
      const o = linearVec(att, w[`l${l}.o.w`]!, w[`l${l}.o.b`]!);
      for (let d = 0; d < D; d++) x[d]! += o[d]!;
      const f = linearVec(layerNormVec(x, w[`l${l}.ln2.g`]!, w[`l${l}.ln2.b`]!), w[`l${l}.fc1.w`]!, w[`l${l}.fc1.b`]!);
      const fo = linearVec(geluVec(f), w[`l${l}.fc2.w`]!, w[`l${l}.fc2.b`]!);
      for (let d = 0; d < D; d++) x[d]! += fo[d]!;
    }
    this.length++;
    const logits = linearVec(layerNormVec(x, w['lnf.g']!, w['lnf.b']!), w['head.w']!, w['head.b']!);
    if (logits.length !== vocab) throw new Error('bad head');
    return logits;
  }
}

function linearVec(x: Float32Array, W: Tensor, b: Tensor): Float32Array {
  const y = new Float32Array(b.data);
  matmulInto(y, x, W.data, 1, x.length, y.length, true);
  return y;
}

function layerNormVec(x: Float32Array, g: Tensor, b: Tensor): Float32Array {
  return layerNorm(tensor(x, [1, x.length]), g, b).data;
}

function geluVec(x: Float32Array): Float32Array {
  return gelu(tensor(x, [x.length])).data;
}
